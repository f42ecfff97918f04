import type { Fields } from "../api/Field"
import { isAbsent, isJsonArray, isJsonObject } from "../api/Json"
import { own } from "../api/own"
import type { Json, JsonObject } from "../api/Json"

/** A collection entry: an object with a string `id` plus its members. */
export type Entry = JsonObject & { readonly id: string }

/**
 * The field names to visit, in a deterministic order: the declared fields in
 * declaration order, then any undeclared keys (schema drift) sorted.
 */
export const fieldNames = (
  fields: Fields,
  ...objects: ReadonlyArray<{ readonly [key: string]: unknown }>
): Array<string> => {
  const declared = Object.keys(fields)
  const known = new Set(declared)
  const undeclared = new Set(objects.flatMap((object) => Object.keys(object)).filter((key) => !known.has(key)))
  return [...declared, ...[...undeclared].sort()]
}

const isEntry = (value: Json): value is Entry => isJsonObject(value) && typeof own(value, "id") === "string"

/**
 * The entries of a collection value; absent or null is an empty collection.
 * undefined when the value is not a collection with unique ids (drift): the
 * caller then treats it as a plain value.
 */
export const entriesOf = (value: Json | undefined): ReadonlyArray<Entry> | undefined => {
  if (isAbsent(value)) return []
  if (!isJsonArray(value)) return undefined
  const entries = value.filter(isEntry)
  const unique = new Set(entries.map((entry) => entry.id)).size === value.length
  return entries.length === value.length && unique ? entries : undefined
}

/** An entry's members, without its `id`. */
export const membersOf = (entry: Entry): JsonObject => {
  const { id: _id, ...members } = entry
  return members
}
