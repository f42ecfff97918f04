import type { Operation } from "../../api/Cause"

/** What the conflict summary needs of a timeline row (a `VersionConflictError`'s entries are such rows). */
export interface ConflictEntry {
  readonly operation: Operation
  readonly changes?: { readonly [field: string]: unknown }
  readonly record?: { readonly [field: string]: unknown }
}

/** One write made since the caller's version, and the fields it changed. */
export interface ConflictChange<E extends ConflictEntry> {
  readonly entry: E
  /** The top-level fields the write changed (a created or deleted row: those it holds); in the row's order. */
  readonly fields: ReadonlyArray<string>
  /** Those of `fields` the caller has changed too. */
  readonly overlapping: ReadonlyArray<string>
}

export interface ConflictSummary<E extends ConflictEntry> {
  readonly changes: ReadonlyArray<ConflictChange<E>>
  /** Every field changed since, once each, in the order first changed. */
  readonly changedFields: ReadonlyArray<string>
  /** The fields both sides changed: keeping mine overwrites theirs there. */
  readonly overlapping: ReadonlyArray<string>
  /** The last write since was the record's deletion: there is nothing to keep one's edits on. */
  readonly deleted: boolean
}

const fieldsOf = (entry: ConflictEntry): ReadonlyArray<string> =>
  Object.keys(entry.operation === "updated" ? (entry.changes ?? {}) : (entry.record ?? {}))

/**
 * Who changed which fields since the caller's version, from the entries of
 * a 412 (oldest first, as sent), against the fields the caller has edited
 * (`mine`): what a conflict view lists before offering "keep mine" and
 * "take theirs". Pure.
 */
export const conflictFields = <E extends ConflictEntry>(
  entries: ReadonlyArray<E>,
  mine: ReadonlyArray<string>
): ConflictSummary<E> => {
  const edited = new Set(mine)
  const changes = entries.map((entry) => {
    const fields = fieldsOf(entry)
    return { entry, fields, overlapping: fields.filter((field) => edited.has(field)) }
  })
  const changedFields = [...new Set(changes.flatMap((change) => change.fields))]
  return {
    changes,
    changedFields,
    overlapping: changedFields.filter((field) => edited.has(field)),
    deleted: entries.at(-1)?.operation === "deleted"
  }
}
