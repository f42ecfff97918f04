import type { HttpServerRequest } from "effect/http"

/**
 * Health probes and metric scrapes: asked every few seconds by machines, they
 * would drown the traces. They are served with tracing off (`Edge.ts`), so
 * their SQL makes no root spans either; their server span is turned off by
 * `HttpMiddleware.TracerDisabledWhen` in Server.ts (the platform's tracer
 * wraps every middleware).
 */
export const isProbe = (request: HttpServerRequest.HttpServerRequest) =>
  request.url.startsWith("/api/health") || request.url.startsWith("/metrics")
