import { HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import type { IncomingMessage, Server, ServerResponse } from "node:http"
import type { ListenOptions } from "node:net"
import { FastRoutes } from "./FastRoutes"

/**
 * `NodeHttpServer.layer` with the fast routes (`FastRoutes`) tried before the
 * Effect app: the platform's server listens and closes, and its request
 * handler serves whatever no fast route takes.
 */
export const nodeServerLayer = (server: Server, options: ListenOptions) =>
  Layer.scoped(
    HttpServer.HttpServer,
    Effect.gen(function* () {
      const routes = yield* FastRoutes
      const listening = yield* NodeHttpServer.make(() => server, options)
      return HttpServer.make({
        address: listening.address,
        serve: (app, middleware) =>
          Effect.gen(function* () {
            const handler = yield* middleware === undefined
              ? NodeHttpServer.makeHandler(app)
              : NodeHttpServer.makeHandler(app, middleware)
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
  ).pipe(Layer.merge(NodeHttpServer.layerContext))
