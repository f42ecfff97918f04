import type { FieldIssue } from "../../../src/api/FieldIssues"
import { humanize } from "../labels"

const what = (issue: FieldIssue): string => {
  switch (issue._tag) {
    case "Missing":
      return "a value is required"
    case "NotAnOption":
      return `"${issue.value}" is not one of the options`
    case "TooLong":
      return `${issue.length} characters, over the limit of ${issue.maxLength}`
    case "BrokenLink":
      return `the linked ${issue.target} record is ${issue.reason}`
  }
}

/**
 * The issues of a form's values (`fieldIssues`, the service's own rules) by
 * the top-level field they are in, as the form shows them under that field:
 * "A value is required", or for a member "Entry 2, product: a value is
 * required" (entries counted from 1, as the form labels them).
 */
export const issuesByField = (issues: ReadonlyArray<FieldIssue>): Readonly<Record<string, string>> => {
  const byField: Record<string, string> = {}
  for (const issue of issues) {
    const [top, ...rest] = issue.path
    if (typeof top !== "string" || Object.hasOwn(byField, top)) continue
    const where = rest.map((step) => (typeof step === "number" ? `entry ${step + 1}` : humanize(step).toLowerCase()))
    const text = where.length === 0 ? what(issue) : `${where.join(", ")}: ${what(issue)}`
    byField[top] = `${text.charAt(0).toUpperCase()}${text.slice(1)}`
  }
  return byField
}
