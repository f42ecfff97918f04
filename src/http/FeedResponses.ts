import { HttpServerResponse } from "effect/http"
import { Context, Duration, Effect, Layer, Option, Schema, Stream } from "effect"
import { StreamEnd } from "../api/Broadcast"
import type { StreamEndReason } from "../api/Broadcast"
import { NotFound, Unauthorized } from "../api/errors"
import type { Workspace } from "../api/Workspace"
import { AppConfig } from "../config/AppConfig"
import { Feed, feedLine } from "../audit/Feed"
import type { FeedBatch, FeedFilter } from "../audit/Feed"
import { encodeFeedCursor } from "../audit/FeedCursor"
import type { FeedPosition } from "../audit/FeedCursor"
import { FeedWake } from "../audit/FeedWake"
import { RecordTitles } from "../audit/RecordTitles"
import { isWorkspaceGone } from "../db/DatabaseFault"
import { readingPrimary } from "../db/ReadPlacement"
import { Readiness } from "../health/Readiness"
import type { AccessRecheck } from "./AccessRecheck"
import { makeFeedWaiterCap } from "./FeedWaiterCap"
import { workspaceGoneMessage } from "./serverFaults"
import { fromJsonText } from "../json/fromJsonText"

/** Matched rows per query of an export: one batch is what the export holds in memory at a time. */
export const exportBatchRows = 2_000

const encoder = new TextEncoder()
const encodeStreamEnd = Schema.encodeSync(fromJsonText(StreamEnd))

/** A read of a workspace dropped meanwhile: none, for the stream to end saying so. */
const workspaceRemovedAsNone = <A, E, R>(read: Effect.Effect<A, E, R>) =>
  read.pipe(
    Effect.map(Option.some),
    Effect.catchCause((cause) => (isWorkspaceGone(cause) ? Effect.succeed(Option.none<A>()) : Effect.failCause(cause)))
  )

/** What a reconnecting EventSource waits before it comes back (it sends `Last-Event-ID`). */
const retryMs = 2_000

/**
 * The three ways the feed answers besides one JSON page: long-poll (a page
 * once something is there or `wait` is over), an SSE stream, and the NDJSON
 * export. None holds a database connection while it waits: it waits on the
 * commit hints of its workspace (`FeedWake`) and queries again. The two that
 * wait read the primary: a hint comes right after a commit, which a replica
 * may not have replayed yet (the wait would then last until the next hint).
 */
export class FeedResponses extends Context.Service<FeedResponses>()("FeedResponses", {
  make: Effect.gen(function* () {
    const feed = yield* Feed
    const wake = yield* FeedWake
    const readiness = yield* Readiness
    const config = yield* AppConfig
    const titles = yield* RecordTitles

    /** A batch of the feed, each row with the titles it names (docs/titles.md), read in the same placement. */
    const titledBatch = (workspace: Workspace, at: FeedPosition, filter: FeedFilter, limit: number) =>
      Effect.flatMap(feed.batch(workspace, at, filter, limit), (batch) =>
        Effect.map(titles.titledRows(workspace, batch.rows, filter.readable), (rows): FeedBatch => ({ ...batch, rows }))
      )
    const waiters = makeFeedWaiterCap(config.maxStreamsPerSession)

    /**
     * A page, waiting up to `wait` for one with rows; passes rows the filters
     * leave out while it waits. After each wait it asks `recheck` first: a
     * caller signed out meanwhile gets 401; one whose grants changed gets the
     * page as far as it was read under the old ones (no rows), and asks again;
     * one whose workspace was dropped gets 404.
     */
    const longPoll = (
      workspace: Workspace,
      start: FeedPosition,
      filter: FeedFilter,
      limit: number,
      wait: number,
      recheck: AccessRecheck
    ) =>
      Effect.scoped(
        Effect.gen(function* () {
          const signal = yield* wake.subscribe(workspace.id)
          const deadline = Date.now() + wait * 1_000
          let at = start
          for (let first = true; ; first = false) {
            const ended = first ? Option.none() : yield* recheck
            if (Option.isSome(ended)) {
              if (ended.value === "signed-out") {
                return yield* new Unauthorized({ message: "the session or API key ended while waiting: sign in again" })
              }
              if (ended.value === "workspace-removed") return yield* new NotFound({ message: workspaceGoneMessage })
              return yield* feed.toPage({ rows: [], next: at, more: false })
            }
            yield* signal.clear
            const batch = yield* readingPrimary(titledBatch(workspace, at, filter, limit))
            const left = deadline - Date.now()
            if (batch.rows.length > 0 || batch.more || left <= 0 || (yield* readiness.isDraining)) {
              return yield* feed.toPage(batch)
            }
            at = batch.next
            yield* signal.await(Duration.millis(left))
          }
        })
      )

    interface Following {
      readonly at: FeedPosition
      readonly lastWrite: number
      readonly ended: boolean
    }

    /** The stream's end: nothing more to write, no next state. */
    const done = [[], Option.none<Following>()] as const

    /**
     * `text/event-stream`: each row an `entry` event whose `id:` is its
     * cursor; a bare `id:` when filtered rows moved the cursor past the last
     * entry (EventSource keeps it for `Last-Event-ID` without an event);
     * keep-alive comments while idle. Ends when the instance drains or after
     * the stream lifetime, and the client comes back with `Last-Event-ID`;
     * ends with `event: end` and a reason as soon as `recheck` says the
     * caller signed out or holds other grants (asked before every read), or
     * the workspace is dropped (`workspace-removed`).
     */
    const events = (
      workspace: Workspace,
      start: FeedPosition,
      filter: FeedFilter,
      limit: number,
      recheck: AccessRecheck
    ) =>
      Stream.unwrap(
        Effect.gen(function* () {
          const signal = yield* wake.subscribe(workspace.id)
          const keepAlive = Duration.toMillis(config.broadcastKeepAlive)
          const endsAt = Date.now() + Duration.toMillis(config.streamMaxLifetime)
          const step = (state: Following) =>
            Effect.gen(function* () {
              if (state.ended || (yield* readiness.isDraining) || Date.now() >= endsAt) return done
              const ended = yield* recheck
              if (Option.isSome(ended)) return [[endOf(ended.value)], Option.some({ ...state, ended: true })] as const
              yield* signal.clear
              const read = yield* readingPrimary(titledBatch(workspace, state.at, filter, limit)).pipe(
                workspaceRemovedAsNone
              )
              if (Option.isNone(read))
                return [[endOf("workspace-removed")], Option.some({ ...state, ended: true })] as const
              const batch = read.value
              let text = ""
              for (const row of batch.rows) {
                const line = feedLine(row)
                text += `id: ${encodeFeedCursor({ position: row.position })}\nevent: entry\ndata: ${line}\n`
              }
              const lastRow = batch.rows[batch.rows.length - 1]
              if (batch.next.position > (lastRow?.position ?? state.at.position)) {
                text += `id: ${encodeFeedCursor(batch.next)}\n\n`
              }
              let lastWrite = text.length > 0 ? Date.now() : state.lastWrite
              if (batch.rows.length === 0 && !batch.more) {
                yield* signal.await(Duration.millis(Math.max(1, lastWrite + keepAlive - Date.now())))
                if (Date.now() - lastWrite >= keepAlive) {
                  text += ": keep-alive\n\n"
                  lastWrite = Date.now()
                }
              }
              const chunk = text.length === 0 ? [] : [encoder.encode(text)]
              return [chunk, Option.some({ at: batch.next, lastWrite, ended: false })] as const
            })
          const opening = Stream.make(encoder.encode(`retry: ${retryMs}\n: connected\n\n`))
          return Stream.concat(opening, Stream.paginate({ at: start, lastWrite: Date.now(), ended: false }, step))
        })
      )

    /**
     * `application/x-ndjson`: every row after `start` that the filters keep,
     * one JSON line each (the entry with its cursor), in keyset batches: the
     * next batch is read only when the response has taken the last one (the
     * socket's backpressure), so memory stays one batch whatever the total.
     * Ends at the end of the feed as it stands when the last batch is read.
     */
    const ndjson = (workspace: Workspace, start: FeedPosition, filter: FeedFilter) => {
      const chunkOf = (batch: FeedBatch) => {
        const lines = batch.rows.map(feedLine).join("")
        const chunk = lines.length === 0 ? [] : [encoder.encode(lines)]
        return [chunk, batch.more ? Option.some(batch.next) : Option.none()] as const
      }
      const from = (at: FeedPosition) =>
        Stream.paginate(at, (next: FeedPosition) =>
          Effect.map(feed.batch(workspace, next, filter, exportBatchRows), chunkOf)
        )
      // The first batch is read before the answer starts, so that its failure (a dropped workspace, a database fault) is a status.
      return Effect.map(feed.batch(workspace, start, filter, exportBatchRows), (first) => {
        const [chunk, next] = chunkOf(first)
        return Stream.concat(
          Stream.fromIterable(chunk),
          Option.match(next, { onNone: () => Stream.empty, onSome: from })
        )
      })
    }

    const endOf = (reason: StreamEndReason) => encoder.encode(`event: end\ndata: ${encodeStreamEnd({ reason })}\n\n`)

    const eventStreamResponse = (stream: Stream.Stream<Uint8Array>) =>
      HttpServerResponse.stream(stream, {
        contentType: "text/event-stream",
        headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
      })

    const ndjsonResponse = (stream: Stream.Stream<Uint8Array>) =>
      HttpServerResponse.stream(stream, {
        contentType: "application/x-ndjson",
        headers: { "cache-control": "no-store", "x-accel-buffering": "no" }
      })

    return { titledBatch, longPoll, events, ndjson, eventStreamResponse, ndjsonResponse, waiters } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
