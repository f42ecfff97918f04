import type { AuditEntry } from "../../api/AuditEntry"
import type { Fields } from "../../api/Field"
import type { HydratedAuditEntry } from "./HydratedValue"
import { hydrateChanges } from "./hydrateChanges"
import { hydrateMembers } from "./hydrateValue"

/** What hydration needs of a business object definition (`GET /api/business-objects`). */
export interface Definition {
  readonly name: string
  readonly fields: Fields
}

/**
 * One row, hydrated against `fields`, the **current** fields of its business
 * object. Everything but `record` and `changes` is kept as sent.
 */
export const hydrateEntry = (fields: Fields, entry: AuditEntry): HydratedAuditEntry => {
  const root = { businessObject: entry.businessObject, path: "" }
  const { record, changes, ...rest } = entry
  return {
    ...rest,
    ...(record === undefined ? {} : { record: hydrateMembers(root, fields, record) }),
    ...(changes === undefined ? {} : { changes: hydrateChanges(root, fields, changes) })
  }
}

/**
 * Hydrates a page of timeline rows against the current definitions (spec,
 * "Timeline hydration rules"): decimal strings become `Decimal`, date strings
 * `PlainDate`, datetime strings `Date`.
 *
 * - business object unknown to `definitions` (renamed, removed): its rows
 *   pass through raw, the others still hydrate;
 * - a field renamed or removed: it passes through untouched, the others hydrate;
 * - a field whose kind changed: throws a `HydrationError` (deliberately).
 *
 * Pure: the input is never modified.
 */
export const hydrateTimeline = (
  definitions: ReadonlyArray<Definition>,
  entries: ReadonlyArray<AuditEntry>
): ReadonlyArray<HydratedAuditEntry> => {
  const fieldsOf = new Map(definitions.map((definition) => [definition.name, definition.fields]))
  return entries.map((entry) => {
    const fields = fieldsOf.get(entry.businessObject)
    return fields === undefined ? entry : hydrateEntry(fields, entry)
  })
}
