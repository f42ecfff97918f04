import type { Fields } from "../api/Field"
import { own } from "../api/own"

/** The longest title shown: a 64 KiB text field would not fit a heading, a link or a timeline row. */
export const titleMaxLength = 120

const placeholder = /\{([^{}]*)\}/gu

/** A rule with `{` is a template whose `{field}` placeholders are filled in; any other rule names one field. */
export const isTemplate = (rule: string): boolean => rule.includes("{")

/** The fields a template names, in order (with repeats). */
export const templateFields = (rule: string): ReadonlyArray<string> =>
  [...rule.matchAll(placeholder)].map((match) => match[1] ?? "")

/**
 * What a title rule is wrong about, or undefined when it holds: a field name
 * must name a declared top-level string field; a template must name at least
 * one field and only declared top-level ones.
 */
export const titleRuleProblem = (rule: string, fields: Fields): string | undefined => {
  if (!isTemplate(rule)) {
    const field = own(fields, rule)
    if (field === undefined) return `title "${rule}" names no declared field`
    return field.kind === "string" ? undefined : `title "${rule}" names a ${field.kind} field, not a string field`
  }
  const named = templateFields(rule)
  if (named.length === 0) return `title template "${rule}" has no {field} placeholder`
  const unknown = named.filter((name) => own(fields, name) === undefined)
  return unknown.length === 0
    ? undefined
    : `title template "${rule}" names ${unknown.map((name) => `{${name}}`).join(", ")}, not a declared top-level field`
}

// A record id (a UUID) or its 8-character prefix: what a person must never read as a name.
const uuid = /[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}/giu
const hexWord = /\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{8}\b/giu

/** Whether a text holds something that reads as an id: a UUID, or an 8-digit hex word mixing letters and digits. */
export const looksLikeId = (text: string): boolean => {
  uuid.lastIndex = 0
  hexWord.lastIndex = 0
  return uuid.test(text) || hexWord.test(text)
}

const withoutIds = (text: string) => text.replace(uuid, " ").replace(hexWord, " ")

/** A value as title text: strings and numbers as they are; anything else (a link is an id, a struct…) is nothing. */
const valueText = (value: unknown): string =>
  typeof value === "string" ? value : typeof value === "number" && Number.isFinite(value) ? String(value) : ""

const clamp = (text: string) =>
  text.length <= titleMaxLength ? text : `${text.slice(0, titleMaxLength - 1).trimEnd()}…`

/**
 * A record's title by its business object's rule (`Plugin.ts`,
 * `BusinessObjectDeclaration.title`): the named field's text, or the
 * template filled in. Ids are taken out (a link placeholder, a title typed
 * as a UUID), whitespace collapsed, long text cut; nothing left:
 * "Untitled <type>". Never throws.
 */
export const recordTitle = (rule: string, values: unknown, typeLabel: string): string => {
  const members = typeof values === "object" && values !== null && !Array.isArray(values) ? values : {}
  const memberText = (name: string) => valueText(Object.hasOwn(members, name) ? Reflect.get(members, name) : undefined)
  const filled = isTemplate(rule) ? rule.replace(placeholder, (_, name: string) => memberText(name)) : memberText(rule)
  // Cut before ids are taken out: a cut could end a word on something that reads as an id.
  const text = withoutIds(clamp(filled)).replace(/\s+/gu, " ").trim()
  // A template's own words ("Deal for {company}") alone are no title: only what came from the record names it.
  const fromRecord = isTemplate(rule) ? withoutIds(templateFields(rule).map(memberText).join("")).trim() : text
  return text.length === 0 || fromRecord.length === 0 ? `Untitled ${typeLabel.toLowerCase()}` : text
}
