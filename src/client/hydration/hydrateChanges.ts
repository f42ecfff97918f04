import type { Changes, CollectionChanges } from "../../api/Changes"
import { isValueChange } from "../../api/Changes"
import { own } from "../../api/own"
import type { Field, Fields } from "../../api/Field"
import type { HydratedChanges, HydratedCollectionChanges, HydratedFieldChange } from "./HydratedValue"
import { HydrationError } from "./HydrationError"
import type { Location } from "./hydrateValue"
import { entryOf, hydrateMembers, hydrateValue, member } from "./hydrateValue"

/**
 * The field diff of an `updated` row, hydrated against the current fields:
 * both sides of every `{from, to}` (a struct whole on each side), the
 * `values` of added collection entries and the nested `changes` of modified
 * ones. Removed entries are `{id}` only. A field the schema no longer
 * declares passes through untouched; one whose kind changed throws.
 */
export const hydrateChanges = (at: Location, fields: Fields, changes: Changes): HydratedChanges => {
  // Built with fromEntries: a field named "__proto__" stays an own member.
  return Object.fromEntries(
    Object.entries(changes).map(([name, change]): [string, HydratedFieldChange] => {
      const field = own(fields, name)
      const here = member(at, name)
      if (field === undefined) return [name, change]
      if (isValueChange(change))
        return [name, { from: hydrateValue(here, field, change.from), to: hydrateValue(here, field, change.to) }]
      return [name, hydrateCollection(here, field, change)]
    })
  )
}

const hydrateCollection = (at: Location, field: Field, change: CollectionChanges): HydratedCollectionChanges => {
  if (field.kind !== "collection") {
    throw new HydrationError(at.businessObject, at.path, field.kind, "collection changes", change)
  }
  const { added, modified, removed } = change
  return {
    ...(added === undefined
      ? {}
      : {
          added: added.map((entry) => ({
            id: entry.id,
            values: hydrateMembers(entryOf(at, entry.id), field.fields, entry.values)
          }))
        }),
    ...(modified === undefined
      ? {}
      : {
          modified: modified.map((entry) => ({
            id: entry.id,
            changes: hydrateChanges(entryOf(at, entry.id), field.fields, entry.changes)
          }))
        }),
    ...(removed === undefined ? {} : { removed })
  }
}
