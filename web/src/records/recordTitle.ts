import type { Fields } from "../../../src/api/Field"
import { shortId } from "../labels"
import { own } from "../../../src/api/own"

/** What a person calls a record: its first non-empty text field, else its short id. */
export const recordTitle = (
  fields: Fields,
  record: { readonly id: string; readonly values: { readonly [name: string]: unknown } }
): string => {
  for (const [name, field] of Object.entries(fields)) {
    const value = own(record.values, name)
    if (field.kind === "string" && typeof value === "string" && value.trim().length > 0) return value
  }
  return shortId(record.id)
}
