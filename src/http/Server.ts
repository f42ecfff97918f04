import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import * as OpenApi from "effect/http-api/OpenApi"
import { HttpMiddleware, HttpRouter } from "effect/http"
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
import { ServedApi } from "./ServedApi"
import { errorResponses } from "./ErrorResponses"
import { requestGuard } from "./RequestGuard"
import { drainHttpServer } from "./HttpDrain"
import { edge } from "./Edge"
import { readYourWrites } from "./ReadYourWrites"
import { FastHeartbeatLive } from "./FastHeartbeat"
import { nodeServerLayer } from "./NodeServer"
import { MetricsRouteLive } from "./MetricsRoute"
import { isProbe } from "./UntracedProbes"
import { WebPageLive } from "./WebPage"
import { recordsByBusinessObject } from "./openapi/recordsByBusinessObject"
import { servedDocument } from "../api/OpenApiDocument"
import { PluginRegistry } from "../plugins/PluginRegistry"

/**
 * The API as served and documented: its OpenAPI document (`/api/openapi.json`,
 * the docs page) has the records routes typed per business object of the
 * plugins loaded at start.
 */
const documentedApi = Effect.map(PluginRegistry, (registry) => {
  const objects = registry.businessObjects.flatMap((definition) => Option.toArray(registry.find(definition.name)))
  const transform = recordsByBusinessObject(objects)
  // The platform types the hook loosely; what it hands over is the document `OpenApi.fromApi` built.
  // This replaces Api's own Transform (`servedDocument`, src/api/OpenApiDocument.ts), so it runs that first.
  return ServedApi.annotate(OpenApi.Transform, (spec) => transform(servedDocument(spec) as OpenApi.OpenAPISpec))
})

/** Every handler, with the authentication middleware its endpoints declare. */
const HandlersLive = Layer.mergeAll(
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
).pipe(
  Layer.provide([AuthenticatedLive, EngineAuthenticatedLive]),
  Layer.provide([Authentication.layer, Access.layer, BusinessObjectGuard.layer])
)

/** The API's routes, its OpenAPI document and its docs page. */
export const ApiLive = Layer.unwrap(
  Effect.map(documentedApi, (api) =>
    Layer.mergeAll(HttpApiBuilder.layer(api, { openapiPath: "/api/openapi.json" }), ApiDocsLive(api))
  )
).pipe(Layer.provide(HandlersLive))

/**
 * What wraps every route, unknown ones included, outermost first: the edge
 * (`Edge.ts`: request id, headers, log line, metrics), read-your-writes over
 * a replica (`ReadYourWrites.ts`: only with `DATABASE_READ_URL`), the error
 * answers (`ErrorResponses.ts`) and the request guard (`RequestGuard.ts`: paths,
 * origins, content types, body limits, body parsing), before the router.
 */
const EdgeLive = HttpRouter.middleware(
  Effect.map(AppConfig, (config) => {
    const outer = edge({ hstsMaxAge: config.hstsMaxAge })
    const guard = requestGuard(config)
    const reads = readYourWrites(Option.isSome(config.databaseReadUrl))
    return (app) => outer(reads(errorResponses(guard(app))))
  }),
  { global: true }
)

/** The routes plus the OpenAPI document, its docs page, `/metrics` and the web page at `/`, behind the edge. */
export const HttpAppLive = Layer.mergeAll(ApiLive, MetricsRouteLive, WebPageLive, EdgeLive)

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
export const HttpServerLive = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const server = createServer(timeoutOptions(config.requestTimeout))
    yield* (yield* GracefulShutdown).onDrain("http", drainHttpServer(server))
    return nodeServerLayer(server, { port: config.port, host: config.host })
  })
).pipe(
  Layer.provide(FastHeartbeatLive),
  Layer.provide([Authentication.layer, BusinessObjectGuard.layer]),
  Layer.provide(Access.layer)
)

/**
 * The running server; its `HttpServer` stays visible so tests can read the
 * bound address. Every request but the probes is a server span when tracing
 * is on (the platform's tracer, see src/app/TracingLive.ts). The edge writes
 * each request's one log line: the router's own per-request logger is off.
 *
 * The router refuses path parameters over 100 characters by default (the
 * route "does not exist": 404). Longer ones must reach the handlers, which
 * answer a clear 400 for what they do not accept.
 */
export const ServerLive = HttpRouter.serve(HttpAppLive, {
  routerConfig: { maxParamLength: 2048 },
  disableLogger: true
}).pipe(
  Layer.provide(
    Layer.mergeAll(
      Layer.succeed(HttpMiddleware.TracerDisabledWhen, isProbe),
      // As in v3: a server span records the request's and the answer's headers, credentials redacted.
      Layer.succeed(HttpMiddleware.TracerHeaderFilter, () => true)
    )
  ),
  Layer.provideMerge(HttpServerLive)
)
