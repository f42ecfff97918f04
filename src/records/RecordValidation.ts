import { Effect, ParseResult, Schema } from "effect"
import { compact } from "../diff"
import type { RecordValues } from "../diff"
import type { Fields } from "../fields/Field"
import { recordValuesSchema } from "../fields/ValueSchema"
import { BadRequest } from "../errors"

/**
 * One line per field. An optional, nullable field reports its union's every
 * branch ("Expected null", "Expected undefined"); only the real complaint
 * about the value is kept.
 */
const formatIssues = (issues: ReadonlyArray<ParseResult.ArrayFormatterIssue>) => {
  const byField = new Map<string, string>()
  for (const issue of issues) {
    const field = issue.path.join(".")
    const message = issue._tag === "Unexpected" ? "unknown field" : issue.message
    if (/^Expected (null|undefined),/.test(message) && byField.has(field)) continue
    if (!byField.has(field) || /^Expected (null|undefined),/.test(byField.get(field) ?? "")) byField.set(field, message)
  }
  return [...byField].map(([field, message]) => (field.length > 0 ? `${field}: ${message}` : message)).join("; ")
}

/**
 * Checks values (whole or partial) against a business object's fields. A bad
 * value is a 400 naming the field (`amount: a decimal is a string of digits`),
 * an unknown field too. Nulls mean "no value" and are dropped.
 */
export const validateValues = (businessObject: string, fields: Fields, input: unknown) =>
  Schema.decodeUnknown(recordValuesSchema(fields), { errors: "all", onExcessProperty: "error" })(input).pipe(
    Effect.map((values) => values as RecordValues),
    Effect.mapError(
      (error) =>
        new BadRequest({
          message: `invalid values for ${businessObject}: ${formatIssues(ParseResult.ArrayFormatter.formatErrorSync(error))}`
        })
    )
  )

/** The values after a partial update: given fields replace (null clears), others stay. */
export const mergeValues = (current: RecordValues, patch: RecordValues): RecordValues =>
  compact({ ...current, ...patch }) as RecordValues
