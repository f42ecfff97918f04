import type { FieldKind } from "../../api/Field"
import type { Json } from "../../api/Json"
import { isJsonArray } from "../../api/Json"

/** What a row held where the current schema expects another kind. */
export type WireForm = "boolean" | "number" | "string" | "array" | "object" | "collection changes"

export const wireFormOf = (value: Json): WireForm => {
  if (typeof value === "boolean") return "boolean"
  if (typeof value === "number") return "number"
  if (typeof value === "string") return "string"
  return isJsonArray(value) ? "array" : "object"
}

const article = (kind: string) => (/^[aeiou]/.test(kind) ? "an" : "a")

/**
 * A field's kind changed since a timeline row was written: the row's wire
 * value does not fit the field's current kind (a number field that is a date
 * now, a struct that is a collection now, ...). The spec makes this a hard
 * error on purpose: it is a breaking schema change, and guessing would show a
 * wrong history. Other drift (unknown business object, renamed or removed
 * field) never throws.
 *
 * `fieldPath` names the field from the record's root: `amount`,
 * `address.city`, `lineItems[l1].price` (a collection entry by its id).
 */
export class HydrationError extends Error {
  readonly _tag = "HydrationError"
  override readonly name = "HydrationError"

  constructor(
    readonly businessObject: string,
    readonly fieldPath: string,
    /** The field's kind in the current schema. */
    readonly expectedKind: FieldKind,
    /** What the row holds there. */
    readonly found: WireForm,
    readonly value: unknown
  ) {
    super(
      `${businessObject}: ${fieldPath} is ${article(expectedKind)} ${expectedKind} field now, ` +
        `but the row holds ${article(found)} ${found} (${String(JSON.stringify(value)).slice(0, 80)}): ` +
        "its kind changed since the row was written"
    )
  }
}
