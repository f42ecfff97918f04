import { HttpApiBuilder, HttpMiddleware, HttpRouter, HttpServer, OpenApi } from "@effect/platform"
import { Duration, Effect, Layer, Option } from "effect"
import { createServer } from "node:http"
import { ApiDocsLive } from "./ApiDocs"
import { AuditHttp } from "./handlers/AuditHttp"
import { Access } from "../auth/Access"
import { BusinessObjectGuard } from "../auth/BusinessObjectGuard"
import { AuthHttp } from "./handlers/AuthHttp"
import { BroadcastHttp } from "./handlers/BroadcastHttp"
import { ChatHttp } from "./handlers/ChatHttp"
import { EngineAuthenticatedLive } from "./EngineAuthLive"
import { EngineHttp } from "./handlers/EngineHttp"
import { AuthenticatedLive } from "./AuthMiddlewareLive"
import { Authentication } from "../auth/Authentication"
import { AppConfig } from "../config/AppConfig"
import { HealthHttp } from "./handlers/HealthHttp"
import { MembersHttp } from "./handlers/MembersHttp"
import { BusinessObjectsHttp } from "./handlers/BusinessObjectsHttp"
import { PresenceHttp } from "./handlers/PresenceHttp"
import { RecordsHttp } from "./handlers/RecordsHttp"
import { GracefulShutdown } from "../shutdown/GracefulShutdown"
import { Api } from "../api/Api"
import { ErrorResponsesLive } from "./ErrorResponses"
import { RequestGuardLive } from "./RequestGuard"
import { drainHttpServer } from "./HttpDrain"
import { edge } from "./Edge"
import { FastHeartbeatLive } from "./FastHeartbeat"
import { nodeServerLayer } from "./NodeServer"
import { MetricsRouteLive } from "./MetricsRoute"
import { isProbe } from "./UntracedProbes"
import { WebPageLive } from "./WebPage"
import { recordsByBusinessObject } from "./openapi/recordsByBusinessObject"
import { PluginRegistry } from "../plugins/PluginRegistry"

/**
 * The API as served and documented: its OpenAPI document (`/api/openapi.json`,
 * the docs page) has the records routes typed per business object of the
 * plugins loaded at start.
 */
const DocumentedApiLive = Layer.unwrapEffect(
  Effect.map(PluginRegistry, (registry) => {
    const objects = registry.businessObjects.flatMap((definition) => Option.toArray(registry.find(definition.name)))
    const transform = recordsByBusinessObject(objects)
    // The platform types the hook loosely; what it hands over is the document `OpenApi.fromApi` built.
    return HttpApiBuilder.api(Api.annotate(OpenApi.Transform, (spec) => transform(spec as OpenApi.OpenAPISpec)))
  })
)

/** The API with every handler and the authentication middleware. */
export const ApiLive = DocumentedApiLive.pipe(
  Layer.provide([
    HealthHttp,
    AuthHttp,
    BusinessObjectsHttp,
    RecordsHttp,
    AuditHttp,
    MembersHttp,
    BroadcastHttp,
    PresenceHttp,
    ChatHttp,
    EngineHttp
  ]),
  Layer.provide([AuthenticatedLive, EngineAuthenticatedLive]),
  Layer.provide([Authentication.Default, Access.Default, BusinessObjectGuard.Default])
)

/**
 * The router refuses path parameters over 100 characters by default (the
 * route "does not exist": 404). Longer ones must reach the handlers, which
 * answer a clear 400 for what they do not accept.
 */
const RouterConfigLive = HttpRouter.setRouterConfig({ maxParamLength: 2048 })

/** The routes plus the OpenAPI document, its docs page, `/metrics` and the web page at `/`, behind the edge. */
export const HttpAppLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) => HttpApiBuilder.serve(edge({ hstsMaxAge: config.hstsMaxAge })))
).pipe(
  Layer.provide(ApiDocsLive),
  Layer.provide(WebPageLive),
  Layer.provide(MetricsRouteLive),
  Layer.provide(HttpApiBuilder.middlewareOpenApi({ path: "/api/openapi.json" })),
  Layer.provide(ErrorResponsesLive),
  Layer.provide(RequestGuardLive),
  Layer.provide(ApiLive),
  Layer.provide(RouterConfigLive)
)

/**
 * Headers and body must arrive within `REQUEST_TIMEOUT_MS`: Node answers 408
 * and closes the connection otherwise. It counts only while a request is
 * being received, so an answered request (a broadcast stream, a slow write)
 * is never cut by it. Node looks for late requests every
 * `connectionsCheckingInterval`: a quarter of the limit, at most 5 s.
 */
const timeoutOptions = (timeout: Duration.Duration) => {
  const millis = Duration.toMillis(timeout)
  return {
    requestTimeout: millis,
    headersTimeout: millis,
    connectionsCheckingInterval: Math.max(10, Math.min(5_000, Math.floor(millis / 4)))
  }
}

/** Serves on HOST:PORT (PORT 0 picks a free port: tests); drains on shutdown (see `drainHttpServer`). */
export const HttpServerLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const server = createServer(timeoutOptions(config.requestTimeout))
    yield* (yield* GracefulShutdown).onDrain("http", drainHttpServer(server))
    return nodeServerLayer(server, { port: config.port, host: config.host })
  })
).pipe(
  Layer.provide(FastHeartbeatLive),
  Layer.provide([Authentication.Default, BusinessObjectGuard.Default]),
  Layer.provide(Access.Default)
)

/**
 * The running server; its `HttpServer` stays visible so tests can read the
 * bound address. Every request but the probes is a server span when tracing
 * is on (the platform's tracer middleware, see src/app/TracingLive.ts).
 */
export const ServerLive = HttpAppLive.pipe(
  HttpServer.withLogAddress,
  HttpMiddleware.withTracerDisabledWhen(isProbe),
  Layer.provideMerge(HttpServerLive)
)
