import { Schema } from "effect"
import type { PresenceIntervals, ResyncReason, StreamEndReason } from "../api/Broadcast"
import { Resync, StreamEnd, StreamShutdown } from "../api/Broadcast"

/**
 * The stream's own events (beside the hints of `Hint.ts`), as the bytes
 * written to the socket. The data of each is its schema in api/Broadcast.ts,
 * encoded; a client decodes it with the same schema.
 */

const encoder = new TextEncoder()

const event = (name: string, data: unknown, retryMs?: number) =>
  encoder.encode(
    `${retryMs === undefined ? "" : `retry: ${retryMs}\n`}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`
  )

/** `event: resync`, with `retry:` in the same block when given (the first event of a stream carries the stream's delay). */
export const resyncEvent = (reason: ResyncReason, presence: PresenceIntervals, retryMs?: number): Uint8Array =>
  event("resync", Schema.encodeSync(Resync)({ reason, presence }), retryMs)

/** The last event of a stream the server ends on purpose, before it closes the connection. */
export const endEvent = (reason: StreamEndReason): Uint8Array => event("end", Schema.encodeSync(StreamEnd)({ reason }))

/** The last event of every stream when the instance shuts down, with a reconnection delay of its own. */
export const shutdownEvent = (retryMs: number): Uint8Array =>
  event("shutdown", Schema.encodeSync(StreamShutdown)({}), retryMs)
