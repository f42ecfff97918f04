import type { Fields } from "../../../src/api/Field"
import { own } from "../../../src/api/own"
import { looksLikeRecordId } from "../titles/recordId"

/**
 * What a person calls a record: the `title` the service sent with it (by
 * its business object's title rule); from a service older than titles, its
 * first non-empty text field that is not an id; else "Untitled".
 */
export const recordTitle = (
  fields: Fields,
  record: { readonly id: string; readonly title?: string; readonly values: { readonly [name: string]: unknown } }
): string => {
  if (record.title !== undefined) return record.title
  for (const [name, field] of Object.entries(fields)) {
    const value = own(record.values, name)
    if (field.kind === "string" && typeof value === "string" && value.trim().length > 0 && !looksLikeRecordId(value))
      return value
  }
  return "Untitled"
}
