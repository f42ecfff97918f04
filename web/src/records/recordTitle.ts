import type { Fields } from "../../../src/api/Field"
import { shortId } from "../labels"
import { own } from "../../../src/api/own"

/** What a person calls a record: its first non-empty text field, else its short id. */
export const recordTitle = (fields: Fields, record: { readonly id: string; readonly values: unknown }): string => {
  const values =
    typeof record.values === "object" && record.values !== null ? (record.values as Record<string, unknown>) : {}
  for (const [name, field] of Object.entries(fields)) {
    const value = own(values, name)
    if (field.kind === "string" && typeof value === "string" && value.trim().length > 0) return value
  }
  return shortId(record.id)
}
