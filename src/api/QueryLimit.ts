import { Schema } from "effect"

/**
 * A `limit` query parameter: an integer, clamped into `min..max` (out of
 * range is not refused), `fallback` when absent. On the wire it is text, so
 * the schema is a transformation from a string; the OpenAPI document says
 * what a caller sends: an integer.
 */
export const queryLimit = (min: number, max: number, fallback: number) =>
  Schema.optionalWith(
    Schema.NumberFromString.pipe(Schema.int(), Schema.clamp(min, max)).annotations({
      jsonSchema: { type: "integer", default: fallback, description: `clamped into ${min}..${max}` }
    }),
    { default: () => fallback }
  )
