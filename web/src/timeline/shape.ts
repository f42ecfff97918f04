/** Telling apart what a diff holds, from its shape (spec, "Changes"). */

export type Plain = { readonly [key: string]: unknown }

// Own guard: Array.isArray narrows unknown to any[].
export const isList = (value: unknown): value is ReadonlyArray<unknown> => Array.isArray(value)

export const isPlain = (value: unknown): value is Plain => {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

export interface ValueChangeView {
  readonly from: unknown
  readonly to: unknown
}

export interface CollectionChangesView {
  readonly added: ReadonlyArray<{ readonly id: string; readonly values: Plain }>
  readonly modified: ReadonlyArray<{ readonly id: string; readonly changes: Plain }>
  readonly removed: ReadonlyArray<{ readonly id: string }>
}

export const asValueChange = (change: unknown): ValueChangeView | undefined =>
  isPlain(change) && "from" in change && "to" in change ? { from: change.from, to: change.to } : undefined

const idOf = (entry: unknown): string | undefined =>
  isPlain(entry) && typeof entry.id === "string" ? entry.id : undefined

const bucket = <A>(value: unknown, pick: (entry: Plain, id: string) => A | undefined): ReadonlyArray<A> =>
  Array.isArray(value)
    ? value.flatMap((entry: unknown) => {
        const id = idOf(entry)
        const picked = id === undefined || !isPlain(entry) ? undefined : pick(entry, id)
        return picked === undefined ? [] : [picked]
      })
    : []

export const asCollectionChanges = (change: unknown): CollectionChangesView | undefined => {
  if (!isPlain(change) || !("added" in change || "modified" in change || "removed" in change)) return undefined
  return {
    added: bucket(change.added, (entry, id) => (isPlain(entry.values) ? { id, values: entry.values } : undefined)),
    modified: bucket(change.modified, (entry, id) =>
      isPlain(entry.changes) ? { id, changes: entry.changes } : undefined
    ),
    removed: bucket(change.removed, (_, id) => ({ id }))
  }
}
