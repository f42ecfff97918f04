import { Schema } from "effect"

/** The two kinds of hint a tab receives (spec, "Broadcast"). */
export const BroadcastType = Schema.Literals(["changed", "presence"])
export type BroadcastType = typeof BroadcastType.Type

/** What a hint names: a record of a business object. Never the record itself. */
export const BroadcastData = Schema.Struct({
  businessObject: Schema.String,
  businessObjectId: Schema.String
})
export type BroadcastData = typeof BroadcastData.Type

/** One hint as a stream sees it: the SSE event name and its data. */
export class Broadcast extends Schema.Class<Broadcast>("Broadcast")({
  type: BroadcastType,
  data: BroadcastData
}) {}

/**
 * The editor presence timing the server keeps: a form heartbeats every
 * `heartbeatMs`; an editor without one for `lapseMs` is no longer listed.
 * Served in every `resync`, so a client never hard-codes them.
 */
export const PresenceIntervals = Schema.Struct({
  heartbeatMs: Schema.Int.check(Schema.isGreaterThan(0)),
  lapseMs: Schema.Int.check(Schema.isGreaterThan(0))
})
export type PresenceIntervals = typeof PresenceIntervals.Type

/** `open`: the stream has just opened (first connect or any reconnect); `resubscribed`: this instance was cut off from the shared pub/sub store and is back. */
export const ResyncReason = Schema.Literals(["open", "resubscribed"])
export type ResyncReason = typeof ResyncReason.Type

/**
 * The data of `event: resync`: hints may have been missed (they are
 * at-most-once), so re-read whatever the page shows. The first event of
 * every stream, and again on every open stream when the instance regains
 * its subscription.
 */
export const Resync = Schema.Struct({
  reason: ResyncReason,
  presence: PresenceIntervals
})
export type Resync = typeof Resync.Type

/**
 * Why the server ended a stream (`event: end`), then closed it:
 * - `signed-out`: the session was signed out (here, or everywhere);
 * - `session-expired`: the session reached its end;
 * - `membership-changed`: the user is no longer a member of the workspace;
 * - `role-changed`: the user's roles, or the grants of one of them, changed;
 * - `workspace-removed`: the workspace was dropped: nothing of it is left, and
 *   no session or key of it signs in any more;
 * - `lifetime`: the stream reached its maximum lifetime.
 * The client's reconnect gets what its rights allow now: a stream, or a 401/403.
 */
export const StreamEndReason = Schema.Literals([
  "signed-out",
  "session-expired",
  "membership-changed",
  "role-changed",
  "workspace-removed",
  "lifetime"
])
export type StreamEndReason = typeof StreamEndReason.Type

/** The data of `event: end`. */
export const StreamEnd = Schema.Struct({ reason: StreamEndReason })
export type StreamEnd = typeof StreamEnd.Type

/** The data of `event: shutdown` (the instance is stopping; reconnect, to another instance): nothing. */
export const StreamShutdown = Schema.Struct({})
export type StreamShutdown = typeof StreamShutdown.Type

/** Every event name a stream carries besides comment lines. */
export const StreamEventName = Schema.Literals(["changed", "presence", "resync", "end", "shutdown"])
export type StreamEventName = typeof StreamEventName.Type
