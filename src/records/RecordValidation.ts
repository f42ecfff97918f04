import { Effect, Formatter, Predicate, Schema, SchemaIssue } from "effect"
import { compactObject } from "../api/Json"
import type { RecordValues } from "../api/Json"
import type { Field, Fields } from "../api/Field"
import { fieldIssues, fieldPathText } from "../api/FieldIssues"
import { own } from "../api/own"
import type { Completeness, FieldIssue } from "../api/FieldIssues"
import { recordValuesSchema } from "../api/ValueSchema"
import { BadRequest, UnprocessableEntity } from "../api/errors"
import { quote, shorten } from "../messages/inputExcerpt"

/** Issues with their paths; an undeclared field is an "unknown field". */
const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => (issue._tag === "UnexpectedKey" ? "unknown field" : SchemaIssue.defaultLeafHook(issue))
})

type FormattedIssue = ReturnType<typeof formatter>["issues"][number]

const keyOf = (segment: NonNullable<FormattedIssue["path"]>[number]) =>
  typeof segment === "object" ? segment.key : segment

/** The member of `input` at `path`; undefined when there is none. */
const valueAt = (input: unknown, path: ReadonlyArray<PropertyKey>): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      Predicate.isObjectOrArray(value) && Object.hasOwn(value, key) ? Reflect.get(value, key) : undefined,
    input
  )

/**
 * A type mismatch as Effect 3 worded it, "Expected string, actual 12": every
 * field is optional and nullable, and Effect 4 words it "Expected string |
 * null" without the value.
 */
const withActual = (message: string, input: unknown, path: ReadonlyArray<PropertyKey>) => {
  const expected = /^Expected ([^,]+)$/.exec(message)?.[1]
  const actual = valueAt(input, path)
  if (expected === undefined || actual === undefined) return message
  const members = expected.split(" | ").filter((member) => member !== "null" && member !== "undefined")
  return `Expected ${members.join(" | ")}, actual ${Formatter.format(actual)}`
}

/**
 * One line per field. An optional, nullable field reports its union's every
 * branch ("Expected null", "Expected undefined"); only the real complaint
 * about the value is kept.
 */
const formatIssues = (issues: ReadonlyArray<FormattedIssue>, input: unknown) => {
  const byField = new Map<string, string>()
  for (const issue of issues) {
    const path = (issue.path ?? []).map(keyOf)
    const field = path.map(String).join(".")
    const message = shorten(withActual(issue.message, input, path), 160)
    if (/^Expected (null|undefined),/.test(message) && byField.has(field)) continue
    if (!byField.has(field) || /^Expected (null|undefined),/.test(byField.get(field) ?? "")) byField.set(field, message)
  }
  const lines = [...byField].map(([field, message]) =>
    field.length > 0 ? `${shorten(field, 80)}: ${message}` : message
  )
  return shorten(lines.slice(0, 10).join("; "), 1000)
}

type ValuesDecoder = (input: unknown) => Effect.Effect<RecordValues, Schema.SchemaError>

const isPlainObject = (value: unknown): value is { readonly [key: string]: unknown } => {
  if (typeof value !== "object" || value === null) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/**
 * `input` with only its own members, as a null-prototype copy, wherever it is
 * decoded against declared fields (the values, a struct's value, a collection
 * entry), at every depth. Effect 4's Struct looks an optional key up with
 * `in`: on a plain object a field named like an Object.prototype member
 * ("constructor", "valueOf", ...) that the input leaves out is found on the
 * prototype, and refused as a wrong value. The decoder builds plain objects
 * from the copies; an object against no declared fields is checked for having
 * no keys (own ones) and passed on as it is.
 */
const ownMembers = (fields: Fields, input: unknown, entry = false): unknown => {
  if (!isPlainObject(input) || (!entry && Object.keys(fields).length === 0)) return input
  // fromEntries defines own members ("__proto__" too); then the copy drops its prototype.
  const copy = Object.fromEntries(
    Object.entries(input).map(([name, value]) => {
      const field = own(fields, name)
      return [name, field === undefined ? value : ownValue(field, value)]
    })
  )
  Object.setPrototypeOf(copy, null)
  return copy
}

const ownValue = (field: Field, value: unknown): unknown => {
  switch (field.kind) {
    case "struct":
      return ownMembers(field.fields, value)
    // An entry is decoded against its `id` and its members: never against no fields.
    case "collection":
      return Array.isArray(value) ? value.map((entry: unknown) => ownMembers(field.fields, entry, true)) : value
    default:
      return value
  }
}

/**
 * The decoder of a business object's values, built once per `fields` (a
 * business object's definition lives as long as the process): building the
 * schema and its parser is most of the cost of a decode. It sees own members
 * only (`ownMembers`).
 */
const decoders = new WeakMap<Fields, ValuesDecoder>()
const decoderOf = (fields: Fields): ValuesDecoder => {
  const known = decoders.get(fields)
  if (known !== undefined) return known
  const decode = Schema.decodeUnknownEffect(recordValuesSchema(fields), { errors: "all", onExcessProperty: "error" })
  const made: ValuesDecoder = (input) => decode(ownMembers(fields, input))
  decoders.set(fields, made)
  return made
}

/**
 * Checks values (whole or partial) against a business object's fields. A bad
 * value is a 400 naming the field (`amount: a decimal is a string of digits`),
 * an unknown field too. Nulls mean "no value" and are dropped.
 */
export const validateValues = (businessObject: string, fields: Fields, input: unknown) =>
  decoderOf(fields)(input).pipe(
    Effect.mapError(
      (error) =>
        new BadRequest({
          message: `invalid values for ${businessObject}: ${formatIssues(formatter(error.issue).issues, input)}`
        })
    )
  )

/** The values after a partial update: given fields replace (null clears), others stay. */
export const mergeValues = (current: RecordValues, patch: RecordValues): RecordValues =>
  compactObject({ ...current, ...patch })

const options = (choices: ReadonlyArray<string>) =>
  shorten(choices.map((choice) => JSON.stringify(choice)).join(", "), 300)

/** One issue as a message shows it: the field's path, then what is wrong; input is only ever excerpted. */
const describeIssue = (issue: FieldIssue): string => {
  const at = shorten(fieldPathText(issue.path), 80)
  switch (issue._tag) {
    case "Missing":
      return `${at}: a value is required`
    case "NotAnOption":
      return `${at}: ${quote(issue.value)} is not one of the options ${options(issue.options)}`
    case "TooLong":
      return `${at}: ${issue.length} characters, over the field's limit of ${issue.maxLength}`
    case "BrokenLink":
      return issue.reason === "missing"
        ? `${at}: no ${issue.target} record ${quote(issue.id)}`
        : `${at}: the ${issue.target} record ${quote(issue.id)} is ${issue.reason === "draft" ? "a draft" : "archived"}`
  }
}

/** 422 naming every refused field (the first ten), or nothing when there are no issues. */
export const refuseIssues = (businessObject: string, issues: ReadonlyArray<FieldIssue>) =>
  issues.length === 0
    ? Effect.void
    : Effect.fail(
        new UnprocessableEntity({
          message: `invalid values for ${businessObject}: ${shorten(issues.slice(0, 10).map(describeIssue).join("; "), 1000)}`
        })
      )

/**
 * The field rules (api/FieldIssues.ts: `required`, a choice's options, a
 * string's `maxLength`) on values that passed `validateValues`: 422 beyond.
 */
export const checkFieldRules = (
  businessObject: string,
  fields: Fields,
  values: RecordValues,
  completeness: Completeness
) => Effect.suspend(() => refuseIssues(businessObject, fieldIssues(fields, values, completeness)))

/** The whole record, its values as JSON, within `maxRecordBytes` (422 beyond). */
export const checkRecordLimits = (businessObject: string, values: RecordValues, maxRecordBytes: number) =>
  Effect.suspend(() => {
    const bytes = Buffer.byteLength(JSON.stringify(values))
    return bytes > maxRecordBytes
      ? Effect.fail(
          new UnprocessableEntity({
            message: `${businessObject} record too large: its values take ${bytes} bytes as JSON, over the limit of ${maxRecordBytes}`
          })
        )
      : Effect.void
  })
