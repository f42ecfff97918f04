import { HttpMiddleware, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"

/** Health probes and metric scrapes: asked every few seconds by machines, they would drown the traces. */
export const isProbe = (request: HttpServerRequest.HttpServerRequest) =>
  request.url.startsWith("/api/health") || request.url.startsWith("/metrics")

/**
 * Serves probes with tracing off, so that their SQL makes no root spans
 * either. (Their server span is turned off by `withTracerDisabledWhen` in
 * Server.ts: the platform's tracer wraps every middleware.)
 */
export const untracedProbes = HttpMiddleware.make((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    isProbe(request) ? Effect.withTracerEnabled(app, false) : app
  )
)
