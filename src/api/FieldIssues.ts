import type { Fields, ScalarField } from "./Field"
import { defaultStringMaxLength } from "./Field"

/** Where a value sits in a record: field names and collection entry indexes, e.g. `["lineItems", 1, "price"]`. */
export type FieldPath = ReadonlyArray<string | number>

/**
 * What is wrong with one value under its field's rules (docs/fields.md). The
 * value's wire shape is `ValueSchema`'s business (a 400); these are values of
 * the right shape that the field refuses (a 422). `BrokenLink` only the
 * service can tell: it needs the database.
 */
export type FieldIssue =
  | { readonly _tag: "Missing"; readonly path: FieldPath }
  | {
      readonly _tag: "NotAnOption"
      readonly path: FieldPath
      readonly value: string
      readonly options: ReadonlyArray<string>
    }
  | { readonly _tag: "TooLong"; readonly path: FieldPath; readonly length: number; readonly maxLength: number }
  | {
      readonly _tag: "BrokenLink"
      readonly path: FieldPath
      readonly target: string
      readonly id: string
      /** `missing`: no such record of `target` (never was, deleted, or another type's id). */
      readonly reason: "missing" | "draft" | "archived"
    }

/**
 * How much of a record the values are, which decides where `required` applies:
 * - `whole`: a record being created or published: every required field has a value;
 * - `patch`: a partial update: a required field that is given may not be null
 *   or blank; one left out keeps its value. A struct or collection entry that
 *   is given is whole (it replaces the old one);
 * - `draft`: a draft's values: nothing is required yet (it is on publish).
 */
export type Completeness = "whole" | "patch" | "draft"

/** A link value found in a record: the record of `target` that `id` must name. */
export interface LinkReference {
  readonly path: FieldPath
  readonly target: string
  readonly id: string
}

type Members = { readonly [key: string]: unknown }

const isMembers = (value: unknown): value is Members =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** No value, for `required`: absent, null, or a string of nothing but whitespace. */
export const isBlank = (value: unknown): boolean =>
  value === undefined || value === null || (typeof value === "string" && value.trim().length === 0)

/** `lineItems[1].price`: a path as messages show it. */
export const fieldPathText = (path: FieldPath): string =>
  path.map((step, index) => (typeof step === "number" ? `[${step}]` : index === 0 ? step : `.${step}`)).join("")

/** Where the visit is: built as it goes down, turned into a `FieldPath` only for a value that has an issue or a link. */
interface PathNode {
  readonly parent: PathNode | undefined
  readonly step: string | number
}

const pathOf = (node: PathNode): FieldPath => {
  const steps: Array<string | number> = []
  for (let at: PathNode | undefined = node; at !== undefined; at = at.parent) steps.push(at.step)
  return steps.reverse()
}

/** A declaration's fields as entries, listed once per declaration: every write visits them. */
const entriesOfFields = new WeakMap<Fields, ReadonlyArray<readonly [string, Fields[string]]>>()
const fieldEntries = (fields: Fields) => {
  let entries = entriesOfFields.get(fields)
  if (entries === undefined) {
    entries = Object.entries(fields)
    entriesOfFields.set(fields, entries)
  }
  return entries
}

/**
 * Visits every scalar field of `fields` in `values`, structs and collection
 * entries included, in declaration order. Values of the wrong shape are
 * skipped: checking shape is the schema's job.
 */
const visitScalars = (
  fields: Fields,
  values: unknown,
  completeness: Completeness,
  visit: (field: ScalarField, value: unknown, given: boolean, at: PathNode, completeness: Completeness) => void,
  parent?: PathNode
): void => {
  if (!isMembers(values)) return
  const inner: Completeness = completeness === "draft" ? "draft" : "whole"
  for (const [name, field] of fieldEntries(fields)) {
    const given = Object.hasOwn(values, name)
    const value = given ? values[name] : undefined
    const at: PathNode = { parent, step: name }
    switch (field.kind) {
      case "struct":
        visitScalars(field.fields, value, inner, visit, at)
        break
      case "collection":
        if (Array.isArray(value)) {
          for (let index = 0; index < value.length; index++) {
            visitScalars(field.fields, value[index], inner, visit, { parent: at, step: index })
          }
        }
        break
      default:
        visit(field, value, given, at, completeness)
    }
  }
}

const scalarIssue = (
  field: ScalarField,
  value: unknown,
  given: boolean,
  at: PathNode,
  completeness: Completeness
): FieldIssue | undefined => {
  const mustHave = completeness === "whole" || (completeness === "patch" && given)
  if (field.required === true && mustHave && isBlank(value)) return { _tag: "Missing", path: pathOf(at) }
  if (typeof value !== "string") return undefined
  if (field.kind === "choice" && !field.options.includes(value)) {
    return { _tag: "NotAnOption", path: pathOf(at), value, options: field.options }
  }
  if (field.kind === "string") {
    const maxLength = field.maxLength ?? defaultStringMaxLength
    if (value.length > maxLength) return { _tag: "TooLong", path: pathOf(at), length: value.length, maxLength }
  }
  return undefined
}

/**
 * The issues of `values` (a record, a draft or a patch, in wire form) under
 * the rules of `fields`: `required`, a choice's options, a string's
 * `maxLength`. Empty when the values pass. Pure: the service checks every
 * write with it (and then the links, which need the database), and a page
 * can run it on a form before saving, from the same served field list.
 */
export const fieldIssues = (fields: Fields, values: unknown, completeness: Completeness): ReadonlyArray<FieldIssue> => {
  const issues: Array<FieldIssue> = []
  visitScalars(fields, values, completeness, (field, value, given, at, mode) => {
    const issue = scalarIssue(field, value, given, at, mode)
    if (issue !== undefined) issues.push(issue)
  })
  return issues
}

/** Every link value in `values` (null and absent links are no value; any string is a reference to check). */
export const linksIn = (fields: Fields, values: unknown): ReadonlyArray<LinkReference> => {
  const links: Array<LinkReference> = []
  visitScalars(fields, values, "draft", (field, value, _given, at) => {
    if (field.kind === "link" && typeof value === "string")
      links.push({ path: pathOf(at), target: field.target, id: value })
  })
  return links
}
