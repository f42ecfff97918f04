import { Context, Metric, Option } from "effect"
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

type RequestMetric = { readonly count: Metric.Counter<number>; readonly time: Metric.Histogram<number> }

/** Outside a fiber the metrics go to the default registry, the one `Metric.snapshot` reads. */
const noContext = Context.empty()

/**
 * The two metrics per method, route and status, tagged once: a tagged metric
 * made per request would be looked up in the registry (its key hashed) on
 * every update. Bounded: Node's parser admits a fixed set of methods, routes
 * are labels from `routeLabel`, statuses are three digits.
 */
const tagged = new Map<string, RequestMetric>()

/**
 * Counts an answer and times it, by method, route and status
 * (`http_requests_total`, `http_request_duration_seconds`), synchronously.
 */
export const recordRequest = (method: string, route: string, status: number, seconds: number): void => {
  const key = `${method} ${status} ${route}`
  let metric = tagged.get(key)
  if (metric === undefined) {
    const labels = { method, route, status: String(status) }
    metric = {
      count: Metric.withAttributes(httpRequests, labels),
      time: Metric.withAttributes(httpRequestDuration, labels)
    }
    tagged.set(key, metric)
  }
  metric.count.updateUnsafe(1, noContext)
  metric.time.updateUnsafe(seconds, noContext)
}
