import { Schema } from "effect"

const isObject = (input: unknown): input is { readonly [field: string]: unknown } =>
  typeof input === "object" && input !== null && !Array.isArray(input)

/**
 * Record values as sent: any JSON object, kept exactly as parsed and checked
 * field by field by the service (`validateValues`), which refuses unknown
 * fields. Not a Schema.Record: the values are checked once, against the
 * business object's fields, where an own "__proto__" (or any unknown) key is
 * refused by name; Effect 3's Schema.Record turned it into the prototype.
 */
export const ValuesInput = Schema.declare(isObject, {
  // The values are JSON as they are: no encoding to JSON (which would document them as any value).
  toCodecJson: () => undefined
}).check(
  // A declared type has no JSON schema of its own: this says what the document shows, an open object.
  Schema.makeFilter(() => true, {
    identifier: "Values",
    description: "field name to value, in wire form",
    toJsonSchema: () => ({ type: "object", additionalProperties: true })
  })
)
