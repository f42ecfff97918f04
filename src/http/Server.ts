import { HttpApiBuilder, HttpApiSwagger, HttpRouter, HttpServer } from "@effect/platform"
import { NodeHttpServer } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { createServer } from "node:http"
import { AuditHttp } from "../audit/AuditHttp"
import { Access } from "../auth/Access"
import { BusinessObjectGuard } from "../auth/BusinessObjectGuard"
import { AuthHttp } from "../auth/AuthHttp"
import { BroadcastHttp } from "../broadcast/BroadcastHttp"
import { ChatHttp } from "../chat/ChatHttp"
import { EngineAuthenticatedLive } from "../engine/EngineAuthLive"
import { EngineHttp } from "../engine/EngineHttp"
import { AuthenticatedLive } from "../auth/AuthMiddlewareLive"
import { Authentication } from "../auth/Authentication"
import { AppConfig } from "../config/AppConfig"
import { HealthHttp } from "../health/HealthHttp"
import { BusinessObjectsHttp } from "../plugins/BusinessObjectsHttp"
import { PresenceHttp } from "../presence/PresenceHttp"
import { RecordsHttp } from "../records/RecordsHttp"
import { GracefulShutdown } from "../shutdown/GracefulShutdown"
import { Api } from "./Api"
import { ErrorResponsesLive } from "./ErrorResponses"
import { drainHttpServer } from "./HttpDrain"
import { requestLog } from "./RequestLog"
import { WebPageLive } from "./WebPage"

/** The API with every handler and the authentication middleware. */
export const ApiLive = HttpApiBuilder.api(Api).pipe(
  Layer.provide([HealthHttp, AuthHttp, BusinessObjectsHttp, RecordsHttp, AuditHttp, BroadcastHttp, PresenceHttp, ChatHttp, EngineHttp]),
  Layer.provide([AuthenticatedLive, EngineAuthenticatedLive]),
  Layer.provide([Authentication.Default, Access.Default, BusinessObjectGuard.Default])
)

/**
 * The router refuses path parameters over 100 characters by default (the
 * route "does not exist": 404). Longer ones must reach the handlers, which
 * answer a clear 400 for what they do not accept.
 */
const RouterConfigLive = HttpRouter.setRouterConfig({ maxParamLength: 2048 })

/** The routes plus the OpenAPI document, its docs page and the web page at `/`. */
export const HttpAppLive = HttpApiBuilder.serve(requestLog).pipe(
  Layer.provide(HttpApiSwagger.layer({ path: "/api/docs" })),
  Layer.provide(WebPageLive),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/api/openapi.json" })),
  Layer.provide(ErrorResponsesLive),
  Layer.provide(ApiLive),
  Layer.provide(RouterConfigLive)
)

/** Serves on HOST:PORT (PORT 0 picks a free port: tests); drains on shutdown (see `drainHttpServer`). */
export const HttpServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const server = createServer()
    yield* (yield* GracefulShutdown).onDrain("http", drainHttpServer(server))
    return NodeHttpServer.layer(() => server, { port: config.port, host: config.host })
  })
)

/** The running server; its `HttpServer` stays visible so tests can read the bound address. */
export const ServerLive = HttpAppLive.pipe(
  HttpServer.withLogAddress,
  Layer.provideMerge(HttpServerLive)
)
