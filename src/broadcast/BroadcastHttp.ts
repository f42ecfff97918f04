import { HttpApiBuilder, HttpServerResponse } from "@effect/platform"
import * as Sse from "@effect/experimental/Sse"
import { Effect, Schedule, Stream } from "effect"
import { Access } from "../auth/Access"
import { allows } from "../auth/Grants"
import { CurrentPrincipal } from "../auth/Principal"
import { AppConfig } from "../config/AppConfig"
import { Forbidden } from "../errors"
import { Api } from "../http/Api"
import type { Broadcast } from "./Broadcast"
import { BroadcastBus } from "./BroadcastBus"

const toSse = (broadcast: Broadcast) =>
  Sse.encoder.write({ _tag: "Event", event: broadcast.type, id: undefined, data: JSON.stringify(broadcast.data) })

/** Written at once (Node sends the headers with the first write), then on every keep-alive tick. */
const opened = ": connected\n\n"
const keepAlive = ": keep-alive\n\n"

export const BroadcastHttp = HttpApiBuilder.group(Api, "broadcast", (handlers) =>
  Effect.gen(function* () {
    const bus = yield* BroadcastBus
    const access = yield* Access
    const config = yield* AppConfig

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
        // Subscribed in the request's scope: released when the client goes away.
        const hints = yield* bus.subscribe(principal.workspace.id)
        const events = Stream.fromQueue(hints).pipe(
          Stream.filter((hint) => allows(grants, hint.data.businessObject, "read")),
          Stream.map(toSse)
        )
        const ticks = Stream.fromSchedule(Schedule.spaced(config.broadcastKeepAlive)).pipe(Stream.as(keepAlive))
        const body = Stream.concat(Stream.make(opened), Stream.merge(events, ticks))
        return HttpServerResponse.stream(Stream.encodeText(body), {
          contentType: "text/event-stream",
          headers: { "cache-control": "no-cache", "x-accel-buffering": "no" }
        })
      })
    )
  })
)
