import { Schema } from "effect"
import { StreamEndReason } from "../api/Broadcast"
import { fromJsonText } from "../json/fromJsonText"

/**
 * A control message across instances: end the open broadcast streams it
 * names, on whichever instance holds them, with `reason`. Published after
 * the change that causes it has committed.
 *
 * - `Session`: the streams of one session (its token's hash): a sign-out.
 * - `User`: the streams of users, in one workspace (`workspaceId`) or in
 *   all of them (null): a membership or role change, a sign-out everywhere.
 * - `Workspace`: every stream of one workspace: it was dropped.
 */
export const StreamRevocation = Schema.Union([
  Schema.TaggedStruct("Session", { tokenHash: Schema.String, reason: StreamEndReason }),
  Schema.TaggedStruct("User", {
    userIds: Schema.Array(Schema.String),
    workspaceId: Schema.NullOr(Schema.String),
    reason: StreamEndReason
  }),
  Schema.TaggedStruct("Workspace", { workspaceId: Schema.String, reason: StreamEndReason })
])
export type StreamRevocation = typeof StreamRevocation.Type

export const StreamRevocationJson = fromJsonText(StreamRevocation)
