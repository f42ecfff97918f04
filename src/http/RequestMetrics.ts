import { HttpMiddleware, HttpServerError, HttpServerRequest } from "@effect/platform"
import { Clock, Effect, Exit, Metric, MetricLabel, Option } from "effect"
import { Api } from "../api/Api"
import { httpRequestDuration, httpRequests } from "../metrics/ServiceMetrics"
import { routeTable } from "./RouteTable"

const routes = routeTable(Api)

/** Served beside the API's endpoints, each its own route in metrics. */
const otherRoutes = new Set(["/api/docs", "/api/openapi.json", "/metrics"])

/**
 * A request's route as a metric label, from a bounded set: the endpoint's
 * path template, one of the other routes, `page` for the web page (any other
 * GET or HEAD outside `/api`), `unmatched` for the rest, so that a scan of
 * random paths cannot grow the number of series.
 */
export const routeLabel = (method: string, pathname: string): string =>
  Option.match(routes(method, pathname), {
    onSome: (route) => route.template,
    onNone: () =>
      otherRoutes.has(pathname)
        ? pathname
        : (method === "GET" || method === "HEAD") && pathname !== "/api" && !pathname.startsWith("/api/")
          ? "page"
          : "unmatched"
  })

/** Counts every answer and times it, by method, route and status (`http_requests_total`, `http_request_duration_seconds`). */
export const requestMetrics = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = yield* Clock.currentTimeNanos
    const exit = yield* Effect.exit(app)
    const status = Exit.isSuccess(exit)
      ? exit.value.status
      : (yield* HttpServerError.causeResponse(exit.cause))[0].status
    const seconds = Number((yield* Clock.currentTimeNanos) - started) / 1e9
    const tags = {
      method: request.method,
      route: routeLabel(request.method, request.url.split("?")[0] ?? ""),
      status: String(status)
    }
    yield* Metric.increment(Metric.taggedWithLabels(httpRequests, labelsOf(tags)))
    yield* Metric.update(Metric.taggedWithLabels(httpRequestDuration, labelsOf(tags)), seconds)
    return yield* exit
  })
)

const labelsOf = (tags: Record<string, string>) =>
  Object.entries(tags).map(([key, value]) => MetricLabel.make(key, value))
