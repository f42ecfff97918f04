import { Effect } from "effect"
import { BadRequest } from "../api/errors"
import type { Field, Fields } from "../api/Field"
import { compactObject, isJsonArray, isJsonObject, jsonEquals } from "../api/Json"
import type { Json, RecordValues } from "../api/Json"
import { own } from "../api/own"
import type { FieldPath } from "../chain/erase"
import { quote } from "../messages/inputExcerpt"

/** A field path checked against the business object's fields, with the field it ends at. */
export interface ErasedPath {
  /** As written: `address.street`. */
  readonly text: string
  readonly path: FieldPath
  readonly field: Field
}

const walk = (fields: Fields, segments: ReadonlyArray<string>, text: string): Field | string => {
  let level: Fields | undefined = fields
  let found: Field | undefined
  for (const [index, segment] of segments.entries()) {
    const where = segments.slice(0, index).join(".")
    if (level === undefined) return `${quote(where)} holds a single value: it has no member ${quote(segment)}`
    if (segment === "id" && found?.kind === "collection") {
      return `${quote(text)}: a collection entry's id is how the timeline knows the entry, not a value: it is kept`
    }
    found = own(level, segment)
    if (found === undefined) {
      return index === 0
        ? `no field ${quote(segment)} (a field no longer declared is erased with every value of the record)`
        : `${quote(where)} has no member ${quote(segment)}`
    }
    level = found.kind === "struct" || found.kind === "collection" ? found.fields : undefined
  }
  return found ?? "an empty path"
}

/**
 * The field paths of an erasure, checked against the fields the business
 * object declares now: each segment a declared field, a struct's member or
 * the member of a collection's entries. 400 naming the first bad one.
 */
export const erasedPaths = (fields: Fields, texts: ReadonlyArray<string>) =>
  Effect.forEach([...new Set(texts)], (text) => {
    const segments = text.split(".")
    if (segments.some((segment) => segment.length === 0)) {
      return Effect.fail(new BadRequest({ message: `field path ${quote(text)}: empty segment` }))
    }
    const field = walk(fields, segments, text)
    return typeof field === "string"
      ? Effect.fail(new BadRequest({ message: `field path ${quote(text)}: ${field}` }))
      : Effect.succeed<ErasedPath>({ text, path: segments, field })
  })

/** `value` with what `path` names set to no value (null): in a collection, in each of its entries. */
const clearedAt = (value: Json | undefined, path: FieldPath): Json | undefined => {
  const [head, ...rest] = path
  if (head === undefined || value === undefined || value === null) return head === undefined ? null : value
  if (isJsonArray(value)) return value.map((entry) => clearedAt(entry, path) ?? null)
  if (!isJsonObject(value) || own(value, head) === undefined) return value
  return { ...value, [head]: clearedAt(own(value, head), rest) ?? null }
}

/**
 * The patch that clears every path in a live record's values (a struct or a
 * collection sent whole, entries with their ids), and the paths it clears
 * something at; no paths: the record holds none of the values.
 */
export const clearingPatch = (
  values: RecordValues,
  paths: ReadonlyArray<ErasedPath>
): { readonly patch: RecordValues; readonly clearing: ReadonlyArray<ErasedPath> } => {
  const patch = new Map<string, Json>()
  const clearing: Array<ErasedPath> = []
  for (const erased of paths) {
    const [name = ""] = erased.path
    const current = patch.has(name) ? patch.get(name) : own(values, name)
    const cleared = clearedAt({ [name]: current ?? null }, erased.path)
    const next = isJsonObject(cleared) ? (own(cleared, name) ?? null) : null
    if (jsonEquals(next, current)) continue
    clearing.push(erased)
    patch.set(name, next)
  }
  return { patch: Object.fromEntries(patch), clearing }
}

/** Values with what `paths` name taken out (none: every value), as copies of a record outside its timeline keep them. */
export const withoutPaths = (values: RecordValues, paths: ReadonlyArray<FieldPath>): RecordValues => {
  if (paths.length === 0) return {}
  const cleared = paths.reduce<Json>((value, path) => clearedAt(value, path) ?? null, values)
  return isJsonObject(cleared) ? compactObject(cleared) : {}
}
