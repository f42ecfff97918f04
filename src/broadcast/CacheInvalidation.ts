import { Schema } from "effect"
import { fromJsonText } from "../json/fromJsonText"

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

export const CacheInvalidationJson = fromJsonText(CacheInvalidation)
