import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { HttpServerRequest } from "effect/http"
import { Effect, Layer, Option, Stream } from "effect"
import { Access } from "../../auth/Access"
import { BusinessObjectGuard } from "../../auth/BusinessObjectGuard"
import { readableBusinessObjects } from "../../auth/Grants"
import { BadRequest } from "../../api/errors"
import { ServedApi } from "../ServedApi"
import { CurrentPrincipal } from "../../api/Principal"
import { Correlation } from "../../audit/Correlation"
import { decodeCursor } from "../../audit/Cursor"
import { Feed } from "../../audit/Feed"
import { decodeFeedCursor, feedStart } from "../../audit/FeedCursor"
import { Timeline } from "../../audit/Timeline"
import { RecordTitles } from "../../audit/RecordTitles"
import { TimelinePage } from "../../api/AuditEntry"
import { CorrelationGroup, CorrelationView } from "../../api/Feed"
import { Members } from "../../auth/Members"
import { serviceDigest } from "../../ledger/Digests"
import { makeCaptureAccessRecheck } from "../AccessRecheck"
import { FeedResponses } from "../FeedResponses"

/** The feed's cursor: `Last-Event-ID` (an EventSource coming back) wins over `cursor`; none: the start. */
const startOf = (cursor: string | undefined, lastEventId: string | undefined) => {
  const given = lastEventId ?? cursor
  if (given === undefined) return Effect.succeed(feedStart)
  return Option.match(decodeFeedCursor(given), {
    onNone: () =>
      new BadRequest({
        message: `${lastEventId === undefined ? "cursor" : "Last-Event-ID"}: not a cursor from this feed`
      }),
    onSome: Effect.succeed
  })
}

/** `before` (order=newest): a cursor this feed made. */
const beforeOf = (before: string) =>
  Option.match(decodeFeedCursor(before), {
    onNone: () => new BadRequest({ message: "before: not a cursor from this feed" }),
    onSome: Effect.succeed
  })

const handlers = HttpApiBuilder.group(ServedApi, "audit", (handlers) =>
  Effect.gen(function* () {
    const guard = yield* BusinessObjectGuard
    const access = yield* Access
    const timeline = yield* Timeline
    const feed = yield* Feed
    const correlation = yield* Correlation
    const responses = yield* FeedResponses
    const captureAccessRecheck = yield* makeCaptureAccessRecheck
    const members = yield* Members
    const titles = yield* RecordTitles

    return handlers
      .handle("timeline", ({ params, query }) =>
        Effect.gen(function* () {
          const { principal } = yield* guard.require(params.businessObject, "read")
          const after = query.cursor === undefined ? Option.none() : decodeCursor(query.cursor)
          if (query.cursor !== undefined && Option.isNone(after)) {
            return yield* new BadRequest({ message: "cursor: not a cursor from this timeline" })
          }
          const page = yield* timeline.page(principal.workspace, params.businessObject, params.id, after, query.limit)
          const readable = readableBusinessObjects(yield* access.grants)
          const entries = yield* titles.titledEntries(principal.workspace, page.entries, readable)
          return new TimelinePage({ ...page, entries })
        })
      )
      .handle("feed", ({ query }) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const accept = request.headers.accept ?? ""
          const streaming = accept.includes("text/event-stream")
          const newest = query.order === "newest"
          if (newest && (streaming || accept.includes("application/x-ndjson") || query.wait !== undefined)) {
            return yield* new BadRequest({
              message: "order=newest answers JSON pages only: follow with the head cursor (SSE, wait) oldest first"
            })
          }
          if (newest && query.cursor !== undefined) {
            return yield* new BadRequest({ message: "cursor: with order=newest, page backwards with before" })
          }
          if (!newest && query.before !== undefined) {
            return yield* new BadRequest({ message: "before: pages backwards, with order=newest only" })
          }
          const before = query.before === undefined ? undefined : yield* beforeOf(query.before)
          const start = yield* startOf(query.cursor, streaming ? request.headers["last-event-id"] : undefined)
          // A named business object must exist and be readable, as on its timeline (404, 403).
          if (query.businessObject !== undefined) yield* guard.require(query.businessObject, "read")
          const principal = yield* CurrentPrincipal
          const workspace = principal.workspace
          const filter = {
            readable: readableBusinessObjects(yield* access.grants),
            businessObject: query.businessObject,
            record: query.record,
            actor: query.actor,
            correlationId: query.correlationId,
            from: query.from,
            to: query.to
          }
          if (newest) {
            const batch = yield* feed.batchBefore(workspace, before, filter, query.limit)
            return yield* feed.toPage({
              ...batch,
              rows: yield* titles.titledRows(workspace, batch.rows, filter.readable)
            })
          }
          if (streaming) {
            const recheck = yield* captureAccessRecheck
            const release = yield* responses.waiters.take(principal.credential)
            return responses.eventStreamResponse(
              responses
                .events(workspace, start, filter, query.limit, recheck)
                .pipe(Stream.ensuring(Effect.sync(release)))
            )
          }
          if (accept.includes("application/x-ndjson")) {
            return responses.ndjsonResponse(yield* responses.ndjson(workspace, start, filter))
          }
          if (query.wait !== undefined && query.wait > 0) {
            const recheck = yield* captureAccessRecheck
            const { wait } = query
            return yield* Effect.acquireUseRelease(
              responses.waiters.take(principal.credential),
              () => responses.longPoll(workspace, start, filter, query.limit, wait, recheck),
              (release) => Effect.sync(release)
            )
          }
          return yield* feed.toPage(yield* responses.titledBatch(workspace, start, filter, query.limit))
        })
      )
      .handle("correlation", ({ params }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          const readable = readableBusinessObjects(yield* access.grants)
          const view = yield* correlation.view(principal.workspace, params.id, readable)
          const entries = yield* titles.titledEntries(
            principal.workspace,
            view.groups.flatMap((group) => group.entries),
            readable
          )
          let start = 0
          const groups = view.groups.map((group) => {
            start += group.entries.length
            return new CorrelationGroup({ ...group, entries: entries.slice(start - group.entries.length, start) })
          })
          return new CorrelationView({ ...view, groups })
        })
      )
      .handle("digest", () =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          yield* members.requireAdmin(principal)
          return yield* serviceDigest(principal.workspace)
        })
      )
  })
)

export const AuditHttp = handlers.pipe(Layer.provide(FeedResponses.layer))
