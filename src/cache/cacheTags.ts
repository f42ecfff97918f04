import type { CacheInvalidation } from "../broadcast/CacheInvalidation"

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
