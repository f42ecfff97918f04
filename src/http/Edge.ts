import { HttpEffect, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Clock, Effect, Exit, LogLevel, Option, References } from "effect"
import { withRetryAfter } from "./ErrorResponses"
import { currentRequestId, requestIdFrom, requestIdHeader, withRequestId } from "./RequestId"
import { recordRequest, routeLabel } from "./RequestMetrics"
import { securityHeadersOf } from "./SecurityHeaders"
import { isProbe } from "./UntracedProbes"

export interface EdgeOptions {
  /** `HSTS_MAX_AGE`: sent as `Strict-Transport-Security` on every answer when set. */
  readonly hstsMaxAge: Option.Option<number>
}

const pathnameOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/**
 * What every request gets on its way in and out, in one middleware (one
 * fiber step list instead of five nested ones; the route is matched once):
 *
 * - its id (`RequestId.ts`): on every log line written while serving it, in
 *   `currentRequestId`, in the `X-Request-Id` header and in every JSON error
 *   body;
 * - the security headers (`SecurityHeaders.ts`) on every answer, errors and
 *   404s included, and `Retry-After` on a JSON error that carries
 *   `retryAfter` (`ErrorResponses.ts`);
 * - tracing off for health probes and metric scrapes (`UntracedProbes.ts`);
 * - one log line (`request`: method, path, status, duration) and the request
 *   metrics by method, route and status (`RequestMetrics.ts`). The router
 *   and the server log nothing per request themselves (Server.ts).
 *
 * The headers are set by a pre-response handler, so they are on answers made
 * after this middleware too (a failure turned into its error response).
 */
export const edge = (options: EdgeOptions) => {
  const headersOf = securityHeadersOf(options.hstsMaxAge)
  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const started = yield* Clock.currentTimeNanos
      const pathname = pathnameOf(request.url)
      const id = requestIdFrom(request.headers[requestIdHeader])
      yield* HttpEffect.appendPreResponseHandler((_request, response) =>
        Effect.succeed(
          withRequestId(withRetryAfter(HttpServerResponse.setHeaders(response, headersOf(pathname, response))), id)
        )
      )
      // On the request's server span (when traced), so a trace can be found from a log line or an error body.
      yield* Effect.annotateCurrentSpan("http.request.id", id)
      const served = isProbe(request) ? Effect.withTracerEnabled(app, false) : app
      const exit = yield* served.pipe(
        Effect.provideService(currentRequestId, Option.some(id)),
        Effect.annotateLogs("requestId", id),
        Effect.exit
      )
      const status = Exit.isSuccess(exit)
        ? exit.value.status
        : (yield* HttpServerError.causeResponse(exit.cause))[0].status
      const nanos = (yield* Clock.currentTimeNanos) - started
      recordRequest(request.method, routeLabel(request.method, pathname), status, Number(nanos) / 1e9)
      // The line's annotations are built only when it is written (LOG_LEVEL may be above Info).
      if (LogLevel.isGreaterThanOrEqualTo("Info", yield* References.MinimumLogLevel)) {
        yield* Effect.logInfo("request").pipe(
          Effect.annotateLogs({
            requestId: id,
            method: request.method,
            path: pathname,
            status,
            durationMs: Math.round(Number(nanos / 1_000_000n))
          })
        )
      }
      return yield* exit
    })
}
