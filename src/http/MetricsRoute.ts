import { HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { Effect, Metric, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { AppConfig } from "../config/AppConfig"
import { samplePoolUsage } from "../db/PoolUsage"
import { prometheusContentType, prometheusText } from "../metrics/prometheusText"
import { sampleQueueDepth } from "../queue/QueueDepth"

const digest = (text: string) => createHash("sha256").update(text).digest()

/** `Authorization: Bearer <token>`, compared in constant time. */
const bearerMatches = (authorization: string | undefined, token: Redacted.Redacted) => {
  const match = /^Bearer (.+)$/i.exec(authorization ?? "")
  return match?.[1] !== undefined && timingSafeEqual(digest(match[1]), digest(Redacted.value(token)))
}

const refused = HttpServerResponse.jsonUnsafe(
  { _tag: "Unauthorized", message: "/metrics needs Authorization: Bearer <METRICS_TOKEN>" },
  { status: 401, headers: { "www-authenticate": 'Bearer realm="metrics"' } }
)

/** A gauge read from the database must not hold the scrape up, nor fail it: the last value stays. */
const sampled = <R>(name: string, sample: Effect.Effect<void, never, R>) =>
  sample.pipe(
    Effect.timeout("1 second"),
    Effect.catchCause((cause) => Effect.logWarning(`metrics: ${name} not sampled`, cause))
  )

/** The gauges that live in the database, read at each scrape. */
const samples = Effect.all([sampled("queue depth", sampleQueueDepth), sampled("pool usage", samplePoolUsage)], {
  concurrency: 2
})

/**
 * `GET /metrics`: every metric of the process (src/metrics/ServiceMetrics.ts,
 * and Effect's own fiber counters) in the Prometheus text format, after
 * reading the gauges that live in the database. Only with `METRICS_TOKEN`
 * set, and only for a request bearing it (401 otherwise); without it the
 * route does not exist (the usual JSON 404), so the page fallback never
 * answers it either.
 */
export const MetricsRouteLive = HttpRouter.use((router) =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    const context = yield* Effect.context<Effect.Services<typeof samples>>()
    const handler = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (Option.isNone(config.metricsToken)) {
        return yield* new HttpServerError.HttpServerError({ reason: new HttpServerError.RouteNotFound({ request }) })
      }
      if (!bearerMatches(request.headers.authorization, config.metricsToken.value)) return refused
      yield* Effect.provide(samples, context)
      return HttpServerResponse.text(prometheusText(yield* Metric.snapshot), {
        contentType: prometheusContentType,
        headers: { "cache-control": "no-store" }
      })
    })
    yield* router.add("GET", "/metrics", handler)
  })
)
