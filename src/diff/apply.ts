import type { Field, Fields } from "../api/Field"
import { isValueChange } from "../api/Changes"
import type { Changes, CollectionChanges, FieldChange } from "../api/Changes"
import { compact, isAbsent } from "../api/Json"
import type { Json, RecordValues } from "../api/Json"
import { own } from "../api/own"
import { entriesOf, fieldNames, membersOf } from "./record"

/**
 * Applies `changes` to `before`; the inverse of diffValues:
 * applyChanges(f, a, diffValues(f, a, b)) equals b up to the normal form.
 *
 * Normal form of the result: no object key at any depth holds null (null and
 * absent are the same "no value", so a `to: null` removes the field); keys in
 * declaration order, then undeclared keys sorted. A collection keeps the order
 * of `before`: modified entries stay in place, removed ones drop out, added
 * ones are appended in `added` order. A collection the changes touch stays an
 * array even when emptied (an empty collection equals an absent one).
 */
export const applyChanges = (fields: Fields, before: RecordValues, changes: Changes | null): RecordValues => {
  const result: Array<[string, Json]> = []
  for (const name of fieldNames(fields, before, changes ?? {})) {
    const change = changes === null ? undefined : own(changes, name)
    const value = change === undefined ? own(before, name) : applyField(own(fields, name), own(before, name), change)
    if (!isAbsent(value)) result.push([name, compact(value)])
  }
  return Object.fromEntries(result)
}

const applyField = (field: Field | undefined, value: Json | undefined, change: FieldChange): Json =>
  isValueChange(change) ? change.to : applyCollection(field?.kind === "collection" ? field.fields : {}, value, change)

const applyCollection = (fields: Fields, value: Json | undefined, change: CollectionChanges): Json => {
  const removed = new Set(change.removed?.map((entry) => entry.id))
  const modified = new Map(change.modified?.map((entry) => [entry.id, entry.changes]))
  const kept = (entriesOf(value) ?? [])
    .filter((entry) => !removed.has(entry.id))
    .map((entry) => {
      const changes = modified.get(entry.id)
      return changes === undefined ? entry : { id: entry.id, ...applyChanges(fields, membersOf(entry), changes) }
    })
  const added = (change.added ?? []).map((entry) => ({ id: entry.id, ...entry.values }))
  return [...kept, ...added]
}
