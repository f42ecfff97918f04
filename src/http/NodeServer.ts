import { HttpServer } from "effect/http"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer, Scope } from "effect"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { ListenOptions } from "node:net"
import { FastRoutes } from "./FastRoutes"

/**
 * `NodeHttpServer.layer` with the fast routes (`FastRoutes`) tried before the
 * Effect app: the platform's server listens and closes, and its request
 * handler serves whatever no fast route takes. (No upgrade or
 * `Expect: 100-continue` handler: no route takes either, and Node answers
 * them itself.)
 */
export const nodeServerLayer = (server: Server, options: ListenOptions) =>
  Layer.effect(
    HttpServer.HttpServer,
    Effect.gen(function* () {
      const routes = yield* FastRoutes
      const listening = yield* NodeHttpServer.make(() => server, options)
      return HttpServer.make({
        address: listening.address,
        serve: (app, middleware) =>
          Effect.gen(function* () {
            const scope = Scope.forkUnsafe(yield* Effect.scope, "parallel")
            const handler = yield* NodeHttpServer.makeHandler(app, { middleware, scope })
            const dispatch = (request: IncomingMessage, response: ServerResponse) => {
              const fallback = () => handler(request, response)
              for (const route of routes) if (route(request, response, fallback)) return
              handler(request, response)
            }
            yield* Effect.acquireRelease(
              Effect.sync(() => server.on("request", dispatch)),
              () => Effect.sync(() => server.off("request", dispatch))
            )
          })
      })
    })
  ).pipe(Layer.merge(NodeHttpServer.layerHttpServices))
