import type { AuditEntry } from "../../api/AuditEntry"
import type { RemovedEntry } from "../../api/Changes"
import type { Decimal } from "./Decimal"
import type { PlainDate } from "./PlainDate"

/**
 * A value after hydration: the wire JSON with `decimal` fields as `Decimal`,
 * `date` fields as `PlainDate` and `datetime` fields as `Date`, at any depth.
 * Every wire value (`Json`) is also a `HydratedValue`: what hydration leaves
 * alone (an unknown business object, a removed field) keeps its wire form.
 */
export type HydratedValue =
  | null
  | boolean
  | number
  | string
  | Decimal
  | PlainDate
  | Date
  | ReadonlyArray<HydratedValue>
  | HydratedObject

export interface HydratedObject {
  readonly [key: string]: HydratedValue
}

/** `{from, to}` with both sides hydrated against the field's current kind. */
export interface HydratedValueChange {
  readonly from: HydratedValue
  readonly to: HydratedValue
}

export interface HydratedAddedEntry {
  readonly id: string
  readonly values: HydratedObject
}

export interface HydratedModifiedEntry {
  readonly id: string
  readonly changes: HydratedChanges
}

/** The buckets of a collection change; an absent bucket stays absent. */
export interface HydratedCollectionChanges {
  readonly added?: ReadonlyArray<HydratedAddedEntry>
  readonly modified?: ReadonlyArray<HydratedModifiedEntry>
  readonly removed?: ReadonlyArray<RemovedEntry>
}

export type HydratedFieldChange = HydratedValueChange | HydratedCollectionChanges

/** The field diff of an `updated` row, hydrated; same tree as the wire `Changes`. */
export interface HydratedChanges {
  readonly [field: string]: HydratedFieldChange
}

/**
 * A timeline row after hydration: every field as the endpoint sent it (`at`
 * stays the exact ISO-8601 string, to the microsecond), `record` and
 * `changes` hydrated. No null padding: `record` only on created/deleted,
 * `changes` only on updated, as on the wire.
 */
export interface HydratedAuditEntry extends Omit<AuditEntry, "record" | "changes"> {
  readonly record?: HydratedObject
  readonly changes?: HydratedChanges
}

export const isHydratedValueChange = (change: HydratedFieldChange): change is HydratedValueChange => "from" in change
