import { Effect, ParseResult, Schema } from "effect"
import { compactObject } from "../api/Json"
import type { RecordValues } from "../api/Json"
import type { Field, Fields } from "../api/Field"
import { defaultStringMaxLength } from "../api/Field"
import { recordValuesSchema } from "../api/ValueSchema"
import { BadRequest, UnprocessableEntity } from "../api/errors"
import { shorten } from "../messages/inputExcerpt"

/**
 * One line per field. An optional, nullable field reports its union's every
 * branch ("Expected null", "Expected undefined"); only the real complaint
 * about the value is kept.
 */
const formatIssues = (issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>) => {
  const byField = new Map<string, string>()
  for (const issue of issues) {
    const field = issue.path.join(".")
    const message = issue._tag === "Unexpected" ? "unknown field" : shorten(issue.message, 160)
    if (/^Expected (null|undefined),/.test(message) && byField.has(field)) continue
    if (!byField.has(field) || /^Expected (null|undefined),/.test(byField.get(field) ?? "")) byField.set(field, message)
  }
  const lines = [...byField].map(([field, message]) =>
    field.length > 0 ? `${shorten(field, 80)}: ${message}` : message
  )
  return shorten(lines.slice(0, 10).join("; "), 1000)
}

/**
 * Checks values (whole or partial) against a business object's fields. A bad
 * value is a 400 naming the field (`amount: a decimal is a string of digits`),
 * an unknown field too. Nulls mean "no value" and are dropped.
 */
export const validateValues = (businessObject: string, fields: Fields, input: unknown) =>
  Schema.decodeUnknown(recordValuesSchema(fields), { errors: "all", onExcessProperty: "error" })(input).pipe(
    Effect.mapError(
      (error) =>
        new BadRequest({
          message: `invalid values for ${businessObject}: ${formatIssues(ParseResult.ArrayFormatter.formatErrorSync(error))}`
        })
    )
  )

/** The values after a partial update: given fields replace (null clears), others stay. */
export const mergeValues = (current: RecordValues, patch: RecordValues): RecordValues =>
  compactObject({ ...current, ...patch })

/** The first string longer than its field allows, as `path: ...`; values were validated against `fields`. */
const overlongString = (fields: Fields, values: unknown, path: string): string | undefined => {
  if (typeof values !== "object" || values === null) return undefined
  for (const [name, field] of Object.entries(fields)) {
    const value: unknown = Object.getOwnPropertyDescriptor(values, name)?.value
    const found = overlongValue(field, value, path === "" ? name : `${path}.${name}`)
    if (found !== undefined) return found
  }
  return undefined
}

const overlongValue = (field: Field, value: unknown, path: string): string | undefined => {
  switch (field.kind) {
    case "string": {
      const limit = field.maxLength ?? defaultStringMaxLength
      return typeof value === "string" && value.length > limit
        ? `${path}: ${value.length} characters, over the field's limit of ${limit}`
        : undefined
    }
    case "struct":
      return overlongString(field.fields, value, path)
    case "collection":
      if (!Array.isArray(value)) return undefined
      for (const [index, entry] of value.entries()) {
        const found = overlongString(field.fields, entry, `${path}[${index}]`)
        if (found !== undefined) return found
      }
      return undefined
    default:
      return undefined
  }
}

/**
 * A record's limits (422 beyond): every string within its field's
 * `maxLength` (`defaultStringMaxLength` unless the field sets one), and the
 * whole record, its values as JSON, within `maxRecordBytes`.
 */
export const checkRecordLimits = (
  businessObject: string,
  fields: Fields,
  values: RecordValues,
  maxRecordBytes: number
) =>
  Effect.suspend(() => {
    const overlong = overlongString(fields, values, "")
    if (overlong !== undefined) {
      return Effect.fail(new UnprocessableEntity({ message: `${businessObject} record too large: ${overlong}` }))
    }
    const bytes = Buffer.byteLength(JSON.stringify(values))
    return bytes > maxRecordBytes
      ? Effect.fail(
          new UnprocessableEntity({
            message: `${businessObject} record too large: its values take ${bytes} bytes as JSON, over the limit of ${maxRecordBytes}`
          })
        )
      : Effect.void
  })
