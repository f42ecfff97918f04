import { Schema } from "effect"

/**
 * What a committed change made stale, told to every instance (docs/security.md, "Caches"):
 *
 * - `Session`: one session ended (sign-out).
 * - `User`: every session of a user ended, in every workspace (sign out everywhere).
 * - `Member`: a user's membership or roles in one workspace changed (removal, role set, member added).
 * - `Principal`: a principal's role assignments in one workspace changed.
 * - `Role`: a role's grants changed: every holder's grants in that workspace.
 * - `ApiKey`: a key was revoked.
 * - `Workspace`: a workspace was dropped: everything of it.
 */
export const CacheInvalidation = Schema.Union([
  Schema.TaggedStruct("Session", { tokenHash: Schema.String }),
  Schema.TaggedStruct("User", { userId: Schema.String }),
  Schema.TaggedStruct("Member", { workspaceId: Schema.String, userId: Schema.String }),
  Schema.TaggedStruct("Principal", { workspaceId: Schema.String, kind: Schema.String, id: Schema.String }),
  Schema.TaggedStruct("Role", { workspaceId: Schema.String }),
  Schema.TaggedStruct("ApiKey", { keyId: Schema.String }),
  Schema.TaggedStruct("Workspace", { workspaceId: Schema.String })
])
export type CacheInvalidation = typeof CacheInvalidation.Type

export const CacheInvalidationJson = Schema.fromJsonString(CacheInvalidation)

/**
 * The dependency tags cached values carry and invalidations name: a value is
 * stale once an invalidation names one of its tags after its read began.
 */
export const cacheTag = {
  session: (tokenHash: string) => `session:${tokenHash}`,
  user: (userId: string) => `user:${userId}`,
  member: (workspaceId: string, userId: string) => `member:${workspaceId}:${userId}`,
  principal: (workspaceId: string, kind: string, id: string) => `principal:${workspaceId}:${kind}:${id}`,
  grants: (workspaceId: string) => `grants:${workspaceId}`,
  apiKey: (keyId: string) => `api-key:${keyId}`,
  workspace: (workspaceId: string) => `workspace:${workspaceId}`
} as const

/** The tags an invalidation names. */
export const tagsOf = (invalidation: CacheInvalidation): ReadonlyArray<string> => {
  switch (invalidation._tag) {
    case "Session":
      return [cacheTag.session(invalidation.tokenHash)]
    case "User":
      return [cacheTag.user(invalidation.userId)]
    case "Member":
      return [cacheTag.member(invalidation.workspaceId, invalidation.userId)]
    case "Principal":
      return [cacheTag.principal(invalidation.workspaceId, invalidation.kind, invalidation.id)]
    case "Role":
      return [cacheTag.grants(invalidation.workspaceId)]
    case "ApiKey":
      return [cacheTag.apiKey(invalidation.keyId)]
    case "Workspace":
      return [cacheTag.workspace(invalidation.workspaceId)]
  }
}
