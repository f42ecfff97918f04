import { Schema } from "effect"
import { isErased } from "../../api/Erased"
import type { Json, JsonObject } from "../../api/Json"
import { isJsonArray, isJsonObject } from "../../api/Json"
import { own } from "../../api/own"
import type { Field, FieldKind, Fields, ScalarKind } from "../../api/Field"
import { valueSchema } from "../../api/ValueSchema"
import { Decimal } from "./Decimal"
import type { HydratedObject, HydratedValue } from "./HydratedValue"
import { HydrationError, wireFormOf } from "./HydrationError"
import { PlainDate } from "./PlainDate"

/** Where hydration is: the business object (for errors) and the field path from the record's root. */
export interface Location {
  readonly businessObject: string
  readonly path: string
}

export const member = (at: Location, name: string): Location => ({
  businessObject: at.businessObject,
  path: at.path === "" ? name : `${at.path}.${name}`
})

export const entryOf = (at: Location, id: string): Location => ({
  businessObject: at.businessObject,
  path: `${at.path}[${id}]`
})

/** The server's own wire-form check of each scalar kind (fields/ValueSchema). */
const fits: { readonly [K in ScalarKind]: (value: unknown) => boolean } = {
  string: Schema.is(valueSchema({ kind: "string" })),
  number: Schema.is(valueSchema({ kind: "number" })),
  boolean: Schema.is(valueSchema({ kind: "boolean" })),
  decimal: Schema.is(valueSchema({ kind: "decimal" })),
  date: Schema.is(valueSchema({ kind: "date" })),
  datetime: Schema.is(valueSchema({ kind: "datetime" })),
  // Any string, as the server's schema: an option dropped since or a record deleted since still reads as written.
  choice: Schema.is(valueSchema({ kind: "choice", options: [] })),
  link: Schema.is(valueSchema({ kind: "link", target: "" }))
}

const mismatch = (at: Location, kind: FieldKind, value: Json): HydrationError =>
  new HydrationError(at.businessObject, at.path, kind, wireFormOf(value), value)

/**
 * One field's wire value, hydrated against the field's current kind. null
 * (no value) stays null; an erased value's marker (`{$erased}`,
 * docs/ledger.md) stays as it is: it stands for a value of any kind that is
 * gone. A value whose wire form does not fit the kind throws a
 * HydrationError: the field's kind changed since the value was written.
 */
export const hydrateValue = (at: Location, field: Field, value: Json): HydratedValue => {
  if (value === null || isErased(value)) return value
  switch (field.kind) {
    case "struct":
      if (!isJsonObject(value)) throw mismatch(at, field.kind, value)
      return hydrateMembers(at, field.fields, value)
    case "collection":
      if (!isJsonArray(value)) throw mismatch(at, field.kind, value)
      return value.map((entry, index) => hydrateEntryValue(at, field.fields, entry, index))
    default:
      if (!fits[field.kind](value)) throw mismatch(at, field.kind, value)
      return scalar(field.kind, value)
  }
}

/** A scalar whose wire form fits its kind: decimals, dates and datetimes (strings on the wire) become objects. */
const scalar = (kind: ScalarKind, value: Json): HydratedValue => {
  if (typeof value !== "string") return value
  switch (kind) {
    case "decimal":
      return Decimal.parse(value)
    case "date":
      return PlainDate.parse(value)
    case "datetime":
      return new Date(value)
    default:
      return value
  }
}

/** A collection entry: an object with a string `id`, kept as is, and members hydrated. */
const hydrateEntryValue = (at: Location, fields: Fields, entry: Json, index: number): HydratedObject => {
  const id = isJsonObject(entry) ? own(entry, "id") : undefined
  if (!isJsonObject(entry) || typeof id !== "string") {
    throw mismatch(entryOf(at, String(index)), "collection", entry)
  }
  const { id: _id, ...members } = entry
  return { id, ...hydrateMembers(entryOf(at, id), fields, members) }
}

/**
 * The members of a record, a struct value or a collection entry. A member the
 * current schema does not declare (renamed or removed since) passes through
 * untouched; every declared one is hydrated. Key order is kept.
 */
export const hydrateMembers = (at: Location, fields: Fields, values: JsonObject): HydratedObject => {
  // Built with fromEntries: a member named "__proto__" stays an own member.
  return Object.fromEntries(
    Object.entries(values).map(([name, value]): [string, HydratedValue] => {
      const field = own(fields, name)
      return [name, field === undefined ? value : hydrateValue(member(at, name), field, value)]
    })
  )
}
