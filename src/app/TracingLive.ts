import { FetchHttpClient } from "effect/http"
// The modules, not the package index: the index also loads the OpenTelemetry SDK, which this does not use.
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import * as OtlpTracer from "effect/observability/OtlpTracer"
import { Effect, Layer, Option, References } from "effect"
import { AppConfig } from "../config/AppConfig"

/**
 * Traces, chosen by configuration. With `OTEL_EXPORTER_OTLP_ENDPOINT` set,
 * Effect's OTLP tracer: every span (HTTP request, unit of work, SQL
 * statement, hint publish, job and workflow run) is batched and POSTed as
 * OTLP/HTTP JSON to `<endpoint>/v1/traces` every `OTEL_BSP_SCHEDULE_DELAY`,
 * and what is left is sent when the service stops. Unset, tracing is turned
 * off: `Effect.withSpan` then hands out the no-op span, so a span costs a
 * reference read and nothing is recorded or sent.
 */
export const TracingLive: Layer.Layer<never, never, AppConfig> = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    return Option.match(config.otelEndpoint, {
      onNone: (): Layer.Layer<never> => Layer.succeed(References.TracerEnabled, false),
      onSome: (endpoint) =>
        OtlpTracer.layer({
          url: `${endpoint}/v1/traces`,
          resource: { serviceName: config.otelServiceName },
          exportInterval: config.otelExportInterval
        }).pipe(Layer.provide(OtlpSerialization.layerJson), Layer.provide(FetchHttpClient.layer))
    })
  })
)
