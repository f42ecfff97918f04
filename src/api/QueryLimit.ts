import { Effect, Schema, SchemaTransformation } from "effect"

/**
 * A `limit` query parameter: an integer, clamped into `min..max` (out of
 * range is not refused), `fallback` when absent. On the wire it is text
 * (HttpApi reads query parameters through their string form); the OpenAPI
 * document says what a caller sends: an integer.
 */
export const queryLimit = (min: number, max: number, fallback: number) =>
  Schema.Int.pipe(
    Schema.decodeTo(
      // A value outside the range is clamped on the way in and refused on the way out (the client sends none).
      Schema.Int.check(Schema.isBetween({ minimum: min, maximum: max })),
      SchemaTransformation.transform({
        decode: (limit: number) => Math.min(max, Math.max(min, limit)),
        encode: (limit: number) => limit
      })
    ),
    Schema.withDecodingDefaultKey(Effect.succeed(fallback))
  )

/** The JSON schema of a `queryLimit(min, max, fallback)` parameter in the OpenAPI document. */
export const queryLimitDocument = (min: number, max: number, fallback: number) => ({
  type: "integer",
  default: fallback,
  description: `clamped into ${min}..${max}`
})
