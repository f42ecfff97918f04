import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { Access } from "../../auth/Access"
import { CurrentPrincipal } from "../../api/Principal"
import { Forbidden } from "../../api/errors"
import { Api } from "../../api/Api"
import { BroadcastBus } from "../../broadcast/BroadcastBus"
import { makeReadFilters } from "../../broadcast/ReadFilter"
import { SseStreams, streamHeaders } from "../SseStreams"

/**
 * `GET /api/broadcast`. Authentication, the grants and the 403/503 answers go
 * through the HTTP server as for any route; the stream itself is then written
 * on the request's socket by `SseStreams` (see docs/broadcast.md, "Cost of a
 * stream").
 */
const handlers = HttpApiBuilder.group(Api, "broadcast", (handlers) =>
  Effect.gen(function* () {
    const bus = yield* BroadcastBus
    const access = yield* Access
    const streams = yield* SseStreams
    const readFilter = makeReadFilters()

    return handlers.handle("stream", () =>
      Effect.gen(function* () {
        const principal = yield* CurrentPrincipal
        if (principal.credential._tag !== "Session") {
          return yield* new Forbidden({
            message: "the broadcast stream needs a browser session: sign in; an API key cannot open it"
          })
        }
        // Read once: a role change applies from the next stream.
        const grants = yield* access.grants
        const request = yield* HttpServerRequest.HttpServerRequest
        const ok = HttpServerResponse.empty({ status: 200, headers: streamHeaders })
        if (request.method === "HEAD") return ok
        const filter = readFilter(grants)
        const session = principal.credential.tokenHash
        yield* streams.start(NodeHttpServerRequest.toServerResponse(request), session, (writer) =>
          bus.attach(principal.workspace.id, writer, filter)
        )
        // The socket has been taken over: this answer is not sent, it only tells the request log 200.
        return ok
      })
    )
  })
)

export const BroadcastHttp = handlers.pipe(Layer.provide(SseStreams.Default))
