import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect, Layer, Option, Stream } from "effect"
import { Access } from "../../auth/Access"
import { BusinessObjectGuard } from "../../auth/BusinessObjectGuard"
import { readableBusinessObjects } from "../../auth/Grants"
import { BadRequest } from "../../api/errors"
import { Api } from "../../api/Api"
import { CurrentPrincipal } from "../../api/Principal"
import { Correlation } from "../../audit/Correlation"
import { decodeCursor } from "../../audit/Cursor"
import { Feed } from "../../audit/Feed"
import { decodeFeedCursor, feedStart } from "../../audit/FeedCursor"
import { Timeline } from "../../audit/Timeline"
import { captureAccessRecheck } from "../AccessRecheck"
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

const handlers = HttpApiBuilder.group(Api, "audit", (handlers) =>
  Effect.gen(function* () {
    const guard = yield* BusinessObjectGuard
    const access = yield* Access
    const timeline = yield* Timeline
    const feed = yield* Feed
    const correlation = yield* Correlation
    const responses = yield* FeedResponses

    return handlers
      .handle("timeline", ({ path, urlParams }) =>
        Effect.gen(function* () {
          const { principal } = yield* guard.require(path.businessObject, "read")
          const after = urlParams.cursor === undefined ? Option.none() : decodeCursor(urlParams.cursor)
          if (urlParams.cursor !== undefined && Option.isNone(after)) {
            return yield* new BadRequest({ message: "cursor: not a cursor from this timeline" })
          }
          return yield* timeline.page(principal.workspace, path.businessObject, path.id, after, urlParams.limit)
        })
      )
      .handle("feed", ({ urlParams }) =>
        Effect.gen(function* () {
          const request = yield* HttpServerRequest.HttpServerRequest
          const accept = request.headers.accept ?? ""
          const streaming = accept.includes("text/event-stream")
          const start = yield* startOf(urlParams.cursor, streaming ? request.headers["last-event-id"] : undefined)
          // A named business object must exist and be readable, as on its timeline (404, 403).
          if (urlParams.businessObject !== undefined) yield* guard.require(urlParams.businessObject, "read")
          const principal = yield* CurrentPrincipal
          const workspace = principal.workspace
          const filter = {
            readable: readableBusinessObjects(yield* access.grants),
            businessObject: urlParams.businessObject,
            record: urlParams.record,
            actor: urlParams.actor,
            correlationId: urlParams.correlationId,
            from: urlParams.from,
            to: urlParams.to
          }
          if (streaming) {
            const recheck = yield* captureAccessRecheck
            const release = yield* responses.waiters.take(principal.credential)
            return responses.eventStreamResponse(
              responses
                .events(workspace, start, filter, urlParams.limit, recheck)
                .pipe(Stream.ensuring(Effect.sync(release)))
            )
          }
          if (accept.includes("application/x-ndjson")) {
            return responses.ndjsonResponse(responses.ndjson(workspace, start, filter))
          }
          if (urlParams.wait !== undefined && urlParams.wait > 0) {
            const recheck = yield* captureAccessRecheck
            const { wait } = urlParams
            return yield* Effect.acquireUseRelease(
              responses.waiters.take(principal.credential),
              () => responses.longPoll(workspace, start, filter, urlParams.limit, wait, recheck),
              (release) => Effect.sync(release)
            )
          }
          return yield* feed.page(workspace, start, filter, urlParams.limit)
        })
      )
      .handle("correlation", ({ path }) =>
        Effect.gen(function* () {
          const principal = yield* CurrentPrincipal
          return yield* correlation.view(principal.workspace, path.id, readableBusinessObjects(yield* access.grants))
        })
      )
  })
)

export const AuditHttp = handlers.pipe(Layer.provide(FeedResponses.Default))
