import type { Field, Fields } from "../api/Field"
import type { AddedEntry, Changes, CollectionChanges, FieldChange, ModifiedEntry, RemovedEntry } from "../api/Changes"
import { compact, isAbsent, jsonEquals } from "../api/Json"
import type { Json, RecordValues } from "../api/Json"
import { own } from "../api/own"
import { entriesOf, fieldNames, membersOf } from "./record"
import type { Entry } from "./record"

/**
 * The changes from `before` to `after`, mirroring the record tree; null when
 * nothing changed (never `{}`). Absent and null are the same "no value".
 * Fields come in declaration order, then undeclared keys sorted.
 */
export const diffValues = (fields: Fields, before: RecordValues, after: RecordValues): Changes | null => {
  const changes: Array<[string, FieldChange]> = []
  for (const name of fieldNames(fields, before, after)) {
    const change = diffField(own(fields, name), own(before, name), own(after, name))
    if (change !== null) changes.push([name, change])
  }
  return changes.length === 0 ? null : Object.fromEntries(changes)
}

const diffField = (field: Field | undefined, before: Json | undefined, after: Json | undefined): FieldChange | null => {
  if (field?.kind === "collection") {
    const from = entriesOf(before)
    const to = entriesOf(after)
    if (from !== undefined && to !== undefined) return diffCollection(field.fields, from, to)
  }
  // Scalars, structs (a struct is one value) and undeclared fields.
  return jsonEquals(before, after) ? null : { from: wire(before), to: wire(after) }
}

const wire = (value: Json | undefined): Json => (isAbsent(value) ? null : compact(value))

/**
 * Collections are diffed by id: entry order is not significant, so a reorder
 * alone is no change. Buckets follow `after` (added, modified) and `before`
 * (removed).
 */
const diffCollection = (
  fields: Fields,
  before: ReadonlyArray<Entry>,
  after: ReadonlyArray<Entry>
): CollectionChanges | null => {
  const previous = new Map(before.map((entry) => [entry.id, entry]))
  const kept = new Set(after.map((entry) => entry.id))
  const added: Array<AddedEntry> = []
  const modified: Array<ModifiedEntry> = []
  for (const entry of after) {
    const old = previous.get(entry.id)
    if (old === undefined) {
      added.push({ id: entry.id, values: compactMembers(fields, entry) })
      continue
    }
    const changes = diffValues(fields, membersOf(old), membersOf(entry))
    if (changes !== null) modified.push({ id: entry.id, changes })
  }
  const removed: Array<RemovedEntry> = before.filter((entry) => !kept.has(entry.id)).map((entry) => ({ id: entry.id }))
  if (added.length === 0 && modified.length === 0 && removed.length === 0) return null
  return {
    ...(added.length > 0 ? { added } : {}),
    ...(modified.length > 0 ? { modified } : {}),
    ...(removed.length > 0 ? { removed } : {})
  }
}

const compactMembers = (fields: Fields, entry: Entry): Record<string, Json> => {
  const members = membersOf(entry)
  return Object.fromEntries(
    fieldNames(fields, members).flatMap((name) => {
      const value = own(members, name)
      return isAbsent(value) ? [] : [[name, compact(value)]]
    })
  )
}
