import type { AuditEntry } from "../api/AuditEntry"
import type { Changes } from "../api/Changes"
import type { Fields } from "../api/Field"
import { linksIn } from "../api/FieldIssues"
import { own } from "../api/own"

/** A record whose title is wanted: its business object and id. */
export interface TitleReference {
  readonly businessObject: string
  readonly id: string
}

/** The records a record's values link to. */
export const valueReferences = (fields: Fields, values: unknown): ReadonlyArray<TitleReference> =>
  linksIn(fields, values).map((link) => ({ businessObject: link.target, id: link.id }))

/** The records either side of a diff links to: scalar links, struct members, collection entries added or changed. */
export const changeReferences = (fields: Fields, changes: Changes): ReadonlyArray<TitleReference> =>
  Object.entries(changes).flatMap(([name, change]): ReadonlyArray<TitleReference> => {
    const field = own(fields, name)
    if (field === undefined) return []
    if ("from" in change) {
      if (field.kind === "link") {
        return [change.from, change.to].flatMap((side) =>
          typeof side === "string" ? [{ businessObject: field.target, id: side }] : []
        )
      }
      return field.kind === "struct"
        ? [change.from, change.to].flatMap((side) => valueReferences(field.fields, side))
        : []
    }
    if (field.kind !== "collection") return []
    return [
      ...(change.added ?? []).flatMap((entry) => valueReferences(field.fields, entry.values)),
      ...(change.modified ?? []).flatMap((entry) => changeReferences(field.fields, entry.changes))
    ]
  })

/**
 * The records an audit row names (docs/titles.md): its own, the one its
 * event cause names, and those its snapshot or diff links to. `fields`:
 * its business object's current fields (none: a type no plugin declares,
 * whose links are not known).
 */
export const entryReferences = (fields: Fields | undefined, entry: AuditEntry): ReadonlyArray<TitleReference> => [
  { businessObject: entry.businessObject, id: entry.businessObjectId },
  ...(entry.cause?.kind === "event"
    ? [{ businessObject: entry.cause.businessObject, id: entry.cause.businessObjectId }]
    : []),
  ...(fields === undefined || entry.record === undefined ? [] : valueReferences(fields, entry.record)),
  ...(fields === undefined || entry.changes === undefined ? [] : changeReferences(fields, entry.changes))
]
