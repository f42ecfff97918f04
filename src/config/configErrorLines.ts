import type { Config } from "effect"
import { SchemaIssue } from "effect"

const formatIssue = SchemaIssue.makeFormatterDefault()

/** A check over several variables has no path of its own: its message names them. */
const line = (path: ReadonlyArray<PropertyKey>, message: string) =>
  path.length === 0 ? message : `${path.map(String).join(".")}: ${message}`

const issueLines = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): ReadonlyArray<string> => {
  switch (issue._tag) {
    case "Pointer":
      return issueLines(issue.issue, [...path, ...issue.path])
    case "Composite":
    case "AnyOf":
      return issue.issues.flatMap((inner) => issueLines(inner, path))
    default:
      return [line(path, formatIssue(issue))]
  }
}

/**
 * A configuration error as one line per wrong or missing variable, in the
 * order they were read: `PORT: Expected a network port value but received
 * "abc"`. `appConfig` gathers every failure into one error (a `Composite`
 * of issues, see `reportingEvery`); each becomes its own line, so an
 * operator fixes them all in one go.
 */
export const configErrorLines = (error: Config.ConfigError): ReadonlyArray<string> => [
  ...new Set(error.cause._tag === "SchemaError" ? issueLines(error.cause.issue, []) : [error.cause.message])
]
