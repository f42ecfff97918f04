import { Effect, References } from "effect"
import type { Tracer } from "effect"

/**
 * `Effect.withSpan`, made only while tracing is on (`TracingLive`: an
 * exporter is configured). With tracing off a span is the no-op span, but
 * wrapping an effect in it still copies the fiber's context to
 * provide it as the parent span (10 to 20 µs a time here, bench/NOTES.md):
 * on the write path, with a span per statement, that added up.
 */
export const withSpanIfTracing =
  (name: string, options?: Tracer.SpanOptions) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    References.TracerEnabled.use((tracing) => (tracing ? Effect.withSpan(effect, name, options) : effect))
