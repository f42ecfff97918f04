import type { Changes } from "../api/Changes"
import { erasedValue, isErased } from "../api/Erased"
import type { RecordValues } from "../api/Json"
import type { Pointer } from "./commitments"
import { childPointer, childSalt, commit } from "./commitments"
import type { RowSalts } from "./rowHash"

/** A field named by its path from the record: `["email"]`, `["address", "street"]`, `["lines", "description"]`. */
export type FieldPath = ReadonlyArray<string>

interface Erasing {
  readonly salts: RowSalts
}

const saltAt = (pointer: Pointer, derived: Uint8Array | undefined, salts: RowSalts) =>
  salts.published.get(pointer) ?? derived

/**
 * Every single value under `value` erased; objects and lists keep their
 * shape, a collection entry its `id`. A null is no value (a field cleared):
 * it stays, so the timeline still replays to the record as stored.
 */
const eraseAll = (
  value: unknown,
  pointer: Pointer,
  derived: Uint8Array | undefined,
  inEntry: boolean,
  state: Erasing
): unknown => {
  if (value === null || isErased(value)) return value
  const salt = saltAt(pointer, derived, state.salts)
  const child = (key: string | number) => (salt === undefined ? undefined : childSalt(salt, key))
  if (typeof value !== "object") {
    return erasedValue(commit(value, pointer, salt, state.salts.published).toString("hex"))
  }
  if (Array.isArray(value)) {
    return value.map((element, index) => eraseAll(element, childPointer(pointer, index), child(index), true, state))
  }
  return Object.fromEntries(
    Object.entries(value).map(([key, member]) => [
      key,
      inEntry && key === "id" ? member : eraseAll(member, childPointer(pointer, key), child(key), false, state)
    ])
  )
}

/**
 * The values at `path` under a snapshot value erased: a struct is entered by
 * member name, a collection in each of its entries.
 */
const eraseValueAt = (
  value: unknown,
  path: FieldPath,
  pointer: Pointer,
  derived: Uint8Array | undefined,
  inEntry: boolean,
  state: Erasing
): unknown => {
  const [head, ...rest] = path
  if (head === undefined) return eraseAll(value, pointer, derived, inEntry, state)
  if (value === null || typeof value !== "object" || isErased(value)) return value
  const salt = saltAt(pointer, derived, state.salts)
  const child = (key: string | number) => (salt === undefined ? undefined : childSalt(salt, key))
  if (Array.isArray(value)) {
    return value.map((entry, index) =>
      eraseValueAt(entry, path, childPointer(pointer, index), child(index), true, state)
    )
  }
  if (!Object.hasOwn(value, head) || (inEntry && head === "id")) return value
  return Object.fromEntries(
    Object.entries(value).map(([key, member]) => [
      key,
      key === head ? eraseValueAt(member, rest, childPointer(pointer, key), child(key), false, state) : member
    ])
  )
}

/** The values at `path` erased in a diff: both sides of a value change, added entries' values, modified entries' diffs. */
const eraseChangesAt = (
  changes: unknown,
  path: FieldPath,
  pointer: Pointer,
  derived: Uint8Array | undefined,
  state: Erasing
): unknown => {
  const [field, ...rest] = path
  if (field === undefined || changes === null || typeof changes !== "object" || Array.isArray(changes)) return changes
  if (!Object.hasOwn(changes, field)) return changes
  const salt = saltAt(pointer, derived, state.salts)
  const child = (key: string | number) => (salt === undefined ? undefined : childSalt(salt, key))
  const change: unknown = Object.getOwnPropertyDescriptor(changes, field)?.value
  const changePointer = childPointer(pointer, field)
  const changeSalt = saltAt(changePointer, child(field), state.salts)
  const within = (key: string) => (changeSalt === undefined ? undefined : childSalt(changeSalt, key))
  let erased: unknown = change
  if (change !== null && typeof change === "object" && !Array.isArray(change)) {
    if ("from" in change || "to" in change) {
      erased = Object.fromEntries(
        Object.entries(change).map(([side, value]) => [
          side,
          eraseValueAt(value, rest, childPointer(changePointer, side), within(side), false, state)
        ])
      )
    } else {
      erased = Object.fromEntries(
        Object.entries(change).map(([bucket, entries]) => [
          bucket,
          Array.isArray(entries)
            ? entries.map((entry: unknown, index) =>
                eraseEntryChange(entry, bucket, rest, childPointer(childPointer(changePointer, bucket), index), state, {
                  derived: (() => {
                    const bucketSalt = saltAt(childPointer(changePointer, bucket), within(bucket), state.salts)
                    return bucketSalt === undefined ? undefined : childSalt(bucketSalt, index)
                  })()
                })
              )
            : entries
        ])
      )
    }
  }
  return { ...changes, [field]: erased }
}

const eraseEntryChange = (
  entry: unknown,
  bucket: string,
  rest: FieldPath,
  pointer: Pointer,
  state: Erasing,
  { derived }: { readonly derived: Uint8Array | undefined }
): unknown => {
  if (entry === null || typeof entry !== "object" || Array.isArray(entry)) return entry
  const salt = saltAt(pointer, derived, state.salts)
  const child = (key: string) => (salt === undefined ? undefined : childSalt(salt, key))
  return Object.fromEntries(
    Object.entries(entry).map(([key, member]) => {
      if (bucket === "added" && key === "values") {
        return [key, eraseValueAt(member, rest, childPointer(pointer, key), child(key), false, state)]
      }
      if (bucket === "modified" && key === "changes") {
        const fields =
          rest.length === 0 && member !== null && typeof member === "object"
            ? Object.keys(member).map((f) => [f])
            : [rest]
        return [
          key,
          fields.reduce<unknown>(
            (changes, path) => eraseChangesAt(changes, path, childPointer(pointer, key), child(key), state),
            member
          )
        ]
      }
      return [key, member]
    })
  )
}

/**
 * The salts to publish once some values of a row are erased and its root salt
 * destroyed: one for each largest subtree with nothing erased in it, so every
 * value left still verifies and no erased value's salt can be derived.
 */
const publishFor = (
  value: unknown,
  pointer: Pointer,
  derived: Uint8Array | undefined,
  salts: RowSalts,
  out: Map<Pointer, Uint8Array>
): void => {
  if (isErased(value)) return
  const salt = saltAt(pointer, derived, salts)
  if (countErased(value) === 0) {
    if (salt !== undefined) out.set(pointer, salt)
    return
  }
  if (value === null || typeof value !== "object") return
  const child = (key: string | number) => (salt === undefined ? undefined : childSalt(salt, key))
  const entries: ReadonlyArray<readonly [string | number, unknown]> = Array.isArray(value)
    ? value.map((element, index) => [index, element] as const)
    : Object.entries(value)
  for (const [key, member] of entries) publishFor(member, childPointer(pointer, key), child(key), salts, out)
}

export interface ErasedRow {
  /** The snapshot and diff with erased markers, in the shapes they had. */
  readonly record: unknown
  readonly changes: unknown
  /** The salts the row keeps from now on (its root salt is destroyed). */
  readonly published: ReadonlyMap<Pointer, Uint8Array>
  /** How many values were erased now (0: the paths name nothing in this row). */
  readonly erasedNow: number
}

/**
 * A row with the values at `paths` (every value when `paths` is empty)
 * replaced by erased markers (`src/api/Erased.ts`) that keep their
 * commitments: the row's content hash, and so the chain, is unchanged.
 */
export const eraseRow = (
  row: { readonly record: RecordValues | null; readonly changes: Changes | null },
  salts: RowSalts,
  paths: ReadonlyArray<FieldPath>
): ErasedRow => {
  const state: Erasing = { salts }
  const rootChild = (key: string) => (salts.salt === null ? undefined : childSalt(salts.salt, key))
  const before = countErased(row.record) + countErased(row.changes)
  const record =
    row.record === null
      ? null
      : paths.length === 0
        ? eraseAll(row.record, "/record", rootChild("record"), false, state)
        : paths.reduce<unknown>(
            (value, path) => eraseValueAt(value, path, "/record", rootChild("record"), false, state),
            row.record
          )
  const changesPaths = paths.length === 0 && row.changes !== null ? Object.keys(row.changes).map((f) => [f]) : paths
  const changes =
    row.changes === null
      ? null
      : changesPaths.reduce<unknown>(
          (value, path) => eraseChangesAt(value, path, "/changes", rootChild("changes"), state),
          row.changes
        )
  const published = new Map<Pointer, Uint8Array>()
  if (record !== null) publishFor(record, "/record", rootChild("record"), salts, published)
  if (changes !== null) publishFor(changes, "/changes", rootChild("changes"), salts, published)
  return { record, changes, published, erasedNow: countErased(record) + countErased(changes) - before }
}

const countErased = (value: unknown): number => {
  if (isErased(value)) return 1
  if (value === null || typeof value !== "object") return 0
  return Object.values(value).reduce<number>((n, member) => n + countErased(member), 0)
}
