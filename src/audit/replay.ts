import type { Actor } from "../api/Actor"
import type { Operation } from "../api/Cause"
import type { Changes } from "../api/Changes"
import { withoutErased } from "../api/Erased"
import type { Fields } from "../api/Field"
import type { RecordValues } from "../api/Json"
import { own } from "../api/own"
import { applyChanges } from "../diff"

/** One timeline row as history needs it, oldest first. */
export interface HistoryRow {
  readonly id: string
  readonly at: string
  readonly actor: Actor
  readonly operation: Operation
  /** The version the entry's write gave its record; null on rows written before versions. */
  readonly recordVersion: number | null
  readonly record?: RecordValues | undefined
  readonly changes?: Changes | undefined
}

/** A record as it was just after `entry`. A deleted record holds its final snapshot. */
export interface ReplayedState {
  readonly state: "operational" | "archived" | "deleted"
  readonly values: RecordValues
  readonly entry: HistoryRow
}

/**
 * The record as its rows, oldest first, leave it: a `created` row's snapshot,
 * each `updated` row's diff applied on it, archived / restored / deleted
 * moving its state. Undefined when the rows hold nothing (the record did not
 * exist yet). Values come in applyChanges' normal form: no nulls; a
 * collection's entries in the order they were added (a reorder is no change,
 * so the timeline does not keep one).
 */
export const replay = (fields: Fields, rows: ReadonlyArray<HistoryRow>): ReplayedState | undefined => {
  let state: ReplayedState | undefined
  for (const row of rows) state = replayStep(fields, state, row)
  return state
}

/** One row applied to the state before it (undefined: the record did not exist yet). */
export const replayStep = (
  fields: Fields,
  state: ReplayedState | undefined,
  row: HistoryRow
): ReplayedState | undefined => {
  switch (row.operation) {
    case "created":
      return { state: "operational", values: applyChanges(fields, row.record ?? {}, null), entry: row }
    case "deleted":
      return { state: "deleted", values: applyChanges(fields, row.record ?? {}, null), entry: row }
    case "updated":
      return state && { ...state, values: applyChanges(fields, state.values, row.changes ?? null), entry: row }
    case "archived":
      return state && { ...state, state: "archived", entry: row }
    case "restored":
      return state && { ...state, state: "operational", entry: row }
    // An erasure's row only says which fields were erased: their values went with it (docs/ledger.md).
    case "erased":
      return state && { ...state, entry: row }
  }
}

/**
 * The values that put every declared field back to `target` (null clears
 * one): the patch of a restore. Fields the business object no longer
 * declares are left as they are. An erased value (docs/ledger.md,
 * "Erasure") is gone: it is restored as no value.
 */
export const restorePatch = (fields: Fields, target: RecordValues): RecordValues =>
  Object.fromEntries(Object.keys(fields).map((name) => [name, withoutErased(own(target, name) ?? null)]))

/** What undoing one `updated` entry takes: its fields, which of them changed again since, and the patch. */
export type UndoPlan =
  | { readonly _tag: "NoSuchEntry" }
  | { readonly _tag: "NotAnUpdate"; readonly operation: Operation }
  | {
      readonly _tag: "Plan"
      /** The top-level fields the entry changed (those still declared), in declared order. */
      readonly fields: ReadonlyArray<string>
      /** Those of them a later entry changed again. */
      readonly changedSince: ReadonlyArray<string>
      /** Each of the entry's fields back to its value just before the entry (null clears it). */
      readonly patch: RecordValues
    }

/**
 * Undoing entry `entryId` of a record whose whole timeline is `rows` (oldest
 * first): each field it changed goes back to its value just before it, a
 * collection as a whole. A field a later row changed again is named in
 * `changedSince`: undoing then would also drop that later change. A value
 * erased since goes back as no value.
 */
export const undoPlan = (fields: Fields, rows: ReadonlyArray<HistoryRow>, entryId: string): UndoPlan => {
  const index = rows.findIndex((row) => row.id === entryId)
  const entry = rows[index]
  if (entry === undefined) return { _tag: "NoSuchEntry" }
  if (entry.operation !== "updated" || entry.changes === undefined) {
    return { _tag: "NotAnUpdate", operation: entry.operation }
  }
  // A field no longer declared cannot be written: it is left as it is.
  const changed = Object.keys(fields).filter((name) => own(entry.changes ?? {}, name) !== undefined)
  const later = new Set(rows.slice(index + 1).flatMap((row) => Object.keys(row.changes ?? {})))
  const before = replay(fields, rows.slice(0, index))?.values ?? {}
  return {
    _tag: "Plan",
    fields: changed,
    changedSince: changed.filter((name) => later.has(name)),
    patch: Object.fromEntries(changed.map((name) => [name, withoutErased(own(before, name) ?? null)]))
  }
}
