import type { JsonSchema as Json } from "effect"
import type { Field, Fields } from "../../api/Field"
import { defaultStringMaxLength } from "../../api/Field"
import { datePattern, datetimePattern, decimalPattern } from "../../api/ValueSchema"

type JsonSchema = Json.JsonSchema

/** An object's schema, as this module builds them (a type alias, so it is a `JsonSchema` too). */
export type ObjectSchema = {
  readonly type: "object"
  readonly required: ReadonlyArray<string>
  readonly properties: Readonly<Record<string, JsonSchema>>
  readonly additionalProperties: false
  readonly description?: string
}

/**
 * How values travel: `input` as a caller sends them (every field optional,
 * null clears one, a collection entry may come without an id), `stored` as
 * the service answers them (no nulls, every entry with its id).
 */
export type ValuesMode = "input" | "stored"

/** `null` clears a field. (`{enum: [null]}`, as the document has always said it.) */
const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { enum: [null] }] })

const entryId = (mode: ValuesMode): JsonSchema => ({
  type: "string",
  minLength: 1,
  description:
    mode === "input"
      ? "the entry's id: keep it for an entry you send back; leave it out for a new entry and the service names it"
      : "the entry's id (a UUID v7 when the service named it)"
})

/** The JSON Schema of one field's value in wire form, as `validateValues` accepts it. */
export const fieldJsonSchema = (field: Field, mode: ValuesMode): JsonSchema => {
  switch (field.kind) {
    case "string":
      return { type: "string", maxLength: field.maxLength ?? defaultStringMaxLength }
    case "number":
      return { type: "number" }
    case "boolean":
      return { type: "boolean" }
    case "decimal":
      return { type: "string", pattern: decimalPattern.source, description: 'a decimal as a string, e.g. "1250.00"' }
    case "date":
      return { type: "string", format: "date", pattern: datePattern.source, description: "yyyy-MM-dd" }
    case "datetime":
      return {
        type: "string",
        format: "date-time",
        pattern: datetimePattern.source,
        description: "ISO-8601 UTC, e.g. 2026-11-21T09:30:00Z"
      }
    case "choice":
      return { type: "string", enum: [...field.options], description: "one of the declared options" }
    case "link":
      return { type: "string", description: `the id of a live ${field.target} record` }
    case "struct":
      return valuesJsonSchema(field.fields, mode)
    case "collection": {
      const entry = valuesJsonSchema(field.fields, mode)
      return {
        type: "array",
        description: "sent whole: entries are matched by id, their order does not count",
        items: {
          ...entry,
          properties: { id: entryId(mode), ...entry.properties },
          required: mode === "stored" ? ["id"] : []
        }
      }
    }
  }
}

/** A required field stays optional in a body (a PATCH leaves it out); the description says when it is needed. */
const requiredNote = (field: Field, schema: JsonSchema): JsonSchema =>
  "required" in field && field.required === true
    ? {
        ...schema,
        description: `${typeof schema.description === "string" && schema.description !== "" ? `${schema.description}; ` : ""}required: must be given on create and publish, and never cleared`
      }
    : schema

/** The JSON Schema of a record's values (or a struct's, or an entry's members): declared fields only. */
export const valuesJsonSchema = (fields: Fields, mode: ValuesMode): ObjectSchema => ({
  type: "object",
  required: [],
  properties: Object.fromEntries(
    Object.entries(fields).map(([name, field]) => {
      const schema = requiredNote(field, fieldJsonSchema(field, mode))
      return [name, mode === "input" ? nullable(schema) : schema]
    })
  ),
  additionalProperties: false
})
