import { Schema } from "effect"
import type { Field, Fields } from "./Field"
import { omittable, type RecordValues } from "./Json"

/** The wire forms of the text-encoded kinds (also stated in the OpenAPI document). */
export const decimalPattern = /^-?(0|[1-9]\d*)(\.\d+)?$/u
export const datePattern = /^\d{4}-\d{2}-\d{2}$/u
export const datetimePattern = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/u

/** The calendar day really exists (2026-02-30 does not). */
const isRealDate = (date: string) => {
  const parsed = new Date(`${date}T00:00:00Z`)
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === date
}

const Decimal = Schema.String.check(
  Schema.isPattern(decimalPattern, { message: 'a decimal is a string of digits, e.g. "1250.00"' })
)
const DateString = Schema.String.check(
  Schema.isPattern(datePattern, { message: "a date is a yyyy-MM-dd string" }),
  Schema.makeFilter(isRealDate, { message: "not a calendar date" })
)
const DateTimeString = Schema.String.check(
  Schema.isPattern(datetimePattern, { message: "a datetime is an ISO-8601 UTC string, e.g. 2026-11-21T09:30:00Z" }),
  Schema.makeFilter((value: string) => !Number.isNaN(Date.parse(value)), { message: "not a real instant" })
)
const FiniteNumber = Schema.Number.check(Schema.isFinite({ message: "a number must be finite" }))

/**
 * Every field may be left out or set to null (no value). These schemas only
 * decode (records/RecordValidation.ts), so a plain `optionalKey`: `omittable`
 * checks a decoded struct or collection again as a plain object, on which a
 * field named like an Object.prototype member ("constructor", "valueOf")
 * that the value leaves out would be found on the prototype.
 */
const membersOf = (fields: Fields) =>
  Object.fromEntries(
    Object.entries(fields).map(([name, field]) => [name, Schema.optionalKey(Schema.NullOr(valueSchema(field)))])
  )

/**
 * A struct of `members` that refuses any other key (with `onExcessProperty:
 * "error"`). `Schema.Struct({})` alone is the `{}` type: it would let every
 * key of a value with no declared fields through, "__proto__" included.
 */
const closedStruct = (members: ReturnType<typeof membersOf>) =>
  Object.keys(members).length > 0
    ? Schema.Struct(members)
    : Schema.Struct({}).check(
        Schema.makeFilter((value) => {
          const keys = Object.keys(value)
          return (
            keys.length === 0 || `unknown field ${JSON.stringify(keys[0]?.slice(0, 40))}: no fields are declared here`
          )
        })
      )

/** The ids given are distinct; entries without one get theirs from the service. */
const hasUniqueIds = (entries: ReadonlyArray<{ readonly id?: string | undefined }>) => {
  const given = entries.flatMap((entry) => (entry.id === undefined ? [] : [entry.id]))
  return new Set(given).size === given.length
}

/** The wire-form schema of one field's value. */
export const valueSchema = (field: Field): Schema.Codec<unknown, unknown> => {
  switch (field.kind) {
    case "string":
      return Schema.String
    case "number":
      return FiniteNumber
    case "boolean":
      return Schema.Boolean
    case "decimal":
      return Decimal
    case "date":
      return DateString
    case "datetime":
      return DateTimeString
    // Any string on the wire: a value outside the options, or naming no live record, is refused by the
    // field rules (422, api/FieldIssues.ts, and the service's link check), not as malformed (400).
    case "choice":
      return Schema.String.annotate({ description: "one of the field's options" }).check(
        Schema.makeFilter(() => true, { toJsonSchema: () => ({ enum: [...field.options] }) })
      )
    case "link":
      return Schema.String.annotate({ description: `the id of a ${field.target} record` })
    case "struct":
      return closedStruct(membersOf(field.fields))
    // An entry sent without an id is new: the service names it (records/EntryIds.ts); a given id is kept.
    case "collection":
      return Schema.Array(
        Schema.Struct({
          id: omittable(Schema.Trimmed.check(Schema.isNonEmpty())),
          ...membersOf(field.fields)
        })
      ).check(Schema.makeFilter(hasUniqueIds, { message: "collection entries need distinct ids" }))
  }
}

/**
 * The schema of a record's values (or of a partial update: every field is
 * optional). Unknown fields are refused rather than silently kept. What it
 * decodes is JSON, each field in its wire form: `RecordValues`.
 */
export const recordValuesSchema = (fields: Fields): Schema.Codec<RecordValues> => closedStruct(membersOf(fields))
