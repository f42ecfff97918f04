import type { Fields } from "../../../src/api/Field"
import type { EntryView } from "./entry"
import type { Plain } from "./shape"
import { asCollectionChanges, isList, isPlain } from "./shape"
import { own } from "../../../src/api/own"

/**
 * The last known values of every collection entry the timeline and the
 * record mention, by `<field>:<entry id>`: so that a row can name an entry
 * it only knows by id (a modified one, or a removed one that is gone from
 * the record).
 */
export type EntryIndex = ReadonlyMap<string, Plain>

export const entryKey = (field: string, id: string) => `${field}:${id}`

const indexValues = (index: Map<string, Plain>, fields: Fields, values: unknown) => {
  if (!isPlain(values)) return
  for (const [name, field] of Object.entries(fields)) {
    const entries = own(values, name)
    if (field.kind !== "collection" || !isList(entries)) continue
    for (const entry of entries) {
      if (isPlain(entry) && typeof entry.id === "string") index.set(entryKey(name, entry.id), entry)
    }
  }
}

const indexAdded = (index: Map<string, Plain>, changes: unknown) => {
  if (!isPlain(changes)) return
  for (const [name, change] of Object.entries(changes)) {
    for (const entry of asCollectionChanges(change)?.added ?? []) index.set(entryKey(name, entry.id), entry.values)
  }
}

/** `entries` newest first, as the timeline has them; later values win, the record's current ones last. */
export const indexEntries = (fields: Fields, entries: ReadonlyArray<EntryView>, current: unknown): EntryIndex => {
  const index = new Map<string, Plain>()
  for (const entry of [...entries].reverse()) {
    indexValues(index, fields, entry.record)
    indexAdded(index, entry.changes)
  }
  indexValues(index, fields, current)
  return index
}
