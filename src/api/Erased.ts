import type { Json, JsonObject } from "./Json"

/**
 * What an erased value reads as in a snapshot or a diff (docs/ledger.md,
 * "Erasure"): the value is gone, its salted commitment stays so the ledger
 * still verifies. Only a single value (never an object or a list) is erased,
 * and field names never start with `$`, so no record value has this shape.
 */
export interface ErasedValue extends JsonObject {
  readonly $erased: string
}

export const isErased = (value: unknown): value is ErasedValue =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  "$erased" in value &&
  typeof value.$erased === "string" &&
  Object.keys(value).length === 1

export const erasedValue = (commitment: string): ErasedValue => ({ $erased: commitment })

/**
 * `value` with every erased marker read as no value (null): what a revert
 * writes back of a past state, so a marker never reaches a record.
 */
export const withoutErased = (value: Json): Json => {
  if (isErased(value)) return null
  if (Array.isArray(value)) return value.map(withoutErased)
  if (value === null || typeof value !== "object") return value
  return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, withoutErased(member)]))
}
