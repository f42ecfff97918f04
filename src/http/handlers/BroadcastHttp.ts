import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Layer, Option } from "effect"
import { ServerResponse } from "node:http"
import { Access } from "../../auth/Access"
import { Sessions } from "../../auth/Sessions"
import { CurrentPrincipal } from "../../api/Principal"
import { Forbidden, Unauthorized } from "../../api/errors"
import { ServedApi } from "../ServedApi"
import { BroadcastBus } from "../../broadcast/BroadcastBus"
import { makeReadFilters } from "../../auth/readFilters"
import { SseStreams, streamHeaders } from "../SseStreams"

/**
 * `GET /api/broadcast`. Authentication, the grants and the 403/503 answers go
 * through the HTTP server as for any route; the stream itself is then written
 * on the request's socket by `SseStreams` (see docs/broadcast.md, "Cost of a
 * stream"). The grants and the session are read once the stream is
 * registered for revocations, so that no change slips between them.
 */
const handlers = HttpApiBuilder.group(ServedApi, "broadcast", (handlers) =>
  Effect.gen(function* () {
    const bus = yield* BroadcastBus
    const access = yield* Access
    const streams = yield* SseStreams
    const sessions = yield* Sessions
    const readFilter = makeReadFilters()

    return handlers.handle("stream", () =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal
        if (principal.credential._tag !== "Session") {
          return yield* new Forbidden({
            message: "the broadcast stream needs a browser session: sign in; an API key cannot open it"
          })
        }
        const request = yield* HttpServerRequest.HttpServerRequest
        const ok = HttpServerResponse.empty({ status: 200, headers: streamHeaders })
        if (request.method === "HEAD") return ok
        const response = NodeHttpServerRequest.toServerResponse(request)
        // The stream takes the HTTP/1.1 socket over; this server speaks no HTTP/2.
        if (!(response instanceof ServerResponse)) return yield* Effect.die(new Error("not an HTTP/1.1 response"))
        const session = principal.credential.tokenHash
        const owner = { session, userId: principal.id, workspaceId: principal.workspace.id }
        yield* streams.start(response, owner, (writer) =>
          Effect.gen(function* () {
            // Read once: a change of roles ends the stream, and the next one reads them again.
            const grants = yield* access.grants
            const endsAt = yield* sessions.expiry(session)
            if (Option.isNone(endsAt)) {
              return yield* new Unauthorized({ message: "the session is unknown or has expired: sign in again" })
            }
            const detach = yield* bus.attach(principal.workspace.id, writer, readFilter(grants))
            return { detach, sessionEndsAt: endsAt.value.getTime() }
          })
        )
        // The socket has been taken over: this answer is not sent, it only tells the request log 200.
        return ok
      })
    )
  })
)

export const BroadcastHttp = handlers.pipe(Layer.provide(SseStreams.layer), Layer.provide(Sessions.layer))
