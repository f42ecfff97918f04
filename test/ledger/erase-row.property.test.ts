import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import type { Changes } from "../../src/api/Changes"
import { Changes as ChangesSchema } from "../../src/api/Changes"
import { isErased } from "../../src/api/Erased"
import type { Fields } from "../../src/api/Field"
import { compactObject, isJsonArray, isJsonObject, JsonObject } from "../../src/api/Json"
import type { Json, RecordValues } from "../../src/api/Json"
import { own } from "../../src/api/own"
import { childPointer } from "../../src/chain/commitments"
import type { FieldPath } from "../../src/chain/erase"
import { eraseRow } from "../../src/chain/erase"
import type { LedgerRow, RowSalts } from "../../src/chain/rowHash"
import { contentHash, rootSalts } from "../../src/chain/rowHash"
import { applyChanges, diffValues } from "../../src/diff"
import { crm } from "../../src/plugins/crm"
import { mergeValues } from "../../src/records/RecordValidation"
import { constantFrom, integer, someOf } from "../support/arbitraries"

/**
 * `eraseRow` (src/chain/erase.ts) over random crm/deal snapshots and diffs
 * and random field paths: the row's content hash is the one it had (with the
 * published salts and no root salt), no erased value is left in clear, no
 * published salt is that of an erased value or of a node above one (salts
 * are derived downwards only), and erasing again (the same or another path)
 * keeps all of it.
 */

const fields: Fields = crm.businessObjects.deal?.fields ?? {}

/**
 * Every text a path can erase carries its field's tag, so "left in clear"
 * is a text search; numbers and booleans sit where only a whole-record
 * erasure reaches (checked by shape).
 */
const tagged = (tag: string) => Schema.NullOr(Schema.Literals([`${tag}-a`, `${tag}-b`, `${tag}-c`]))

const lineItem = Schema.Struct({
  id: Schema.Literals(["l1", "l2", "l3", "l4"]),
  product: tagged("Prod"),
  quantity: Schema.NullOr(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 3 }))),
  price: tagged("Price")
})

const lineItems = Arbitrary.array(Arbitrary.schema(lineItem), { maxLength: 4 }).pipe(
  Arbitrary.map((entries) => entries.filter((entry, i) => entries.findIndex((other) => other.id === entry.id) === i))
)

/** JSON has no -0 (it writes 0), and the diff takes -0 for 0: generated numbers are made plain. */
const withoutNegativeZero = (values: RecordValues): RecordValues =>
  Object.fromEntries(Object.entries(values).map(([key, value]) => [key, plainZero(value)]))
const plainZero = (value: Json): Json => {
  if (typeof value === "number") return value + 0
  if (isJsonArray(value)) return value.map(plainZero)
  return isJsonObject(value) ? withoutNegativeZero(value) : value
}

const dealValues: Arbitrary.Arbitrary<RecordValues> = Arbitrary.all({
  values: Arbitrary.schema(
    Schema.Struct({
      title: tagged("Title"),
      stage: tagged("Stage"),
      address: Schema.NullOr(
        Schema.Struct({ street: tagged("Street"), city: tagged("City"), country: tagged("Country") })
      ),
      // Undeclared (a field dropped since): kept as any JSON scalar.
      misc: Schema.NullOr(Schema.Union([Schema.Boolean, Schema.Int])),
      "we/ird~key": tagged("Weird")
    })
  ),
  collection: Arbitrary.schema(Schema.Boolean).pipe(
    Arbitrary.flatMap((present) => (present ? lineItems : Arbitrary.Constant(null)))
  )
}).pipe(
  Arbitrary.map(({ values, collection }) =>
    mergeValues({}, withoutNegativeZero(compactObject({ ...values, lineItems: collection })))
  )
)

/** A path and the tags of every text it erases. */
interface NamedPath {
  readonly path: FieldPath
  readonly tags: ReadonlyArray<string>
}

const paths: ReadonlyArray<NamedPath> = [
  { path: ["title"], tags: ["Title-"] },
  { path: ["address"], tags: ["Street-", "City-", "Country-"] },
  { path: ["address", "street"], tags: ["Street-"] },
  { path: ["lineItems"], tags: ["Prod-", "Price-"] },
  { path: ["lineItems", "product"], tags: ["Prod-"] },
  { path: ["we/ird~key"], tags: ["Weird-"] },
  // Naming nothing: an entry's id, a member of a scalar, a field no row has.
  { path: ["lineItems", "id"], tags: [] },
  { path: ["title", "deeper"], tags: [] },
  { path: ["nope"], tags: [] }
]

const pathSet = someOf(paths.map((path) => Arbitrary.Constant(path)))

type Kind = "created" | "updated" | "deleted"

interface GeneratedRow {
  readonly kind: Kind
  readonly record: RecordValues | null
  readonly changes: Changes | null
  readonly salt: Buffer
}

const generatedRow: Arbitrary.Arbitrary<GeneratedRow> = Arbitrary.all({
  kind: constantFrom<Kind>("created", "updated", "deleted"),
  before: dealValues,
  after: dealValues,
  seed: integer(0, 1_000_000)
}).pipe(
  Arbitrary.map(({ kind, before, after, seed }) => {
    const salt = createHash("sha256").update(`salt ${seed}`).digest().subarray(0, 16)
    if (kind !== "updated") return { kind, record: after, changes: null, salt }
    const changes = diffValues(fields, before, mergeValues(before, after))
    // An update that changes nothing leaves no row: a created one stands in.
    return changes === null
      ? { kind: "created", record: before, changes: null, salt }
      : { kind, record: null, changes, salt }
  })
)

const ledgerRow = (row: { readonly record: RecordValues | null; readonly changes: Changes | null }): LedgerRow => ({
  id: "row-1",
  actor: { kind: "user", id: "u1", name: "Ada", email: "ada@example.com" },
  correlationId: "c-1",
  parentCorrelationId: null,
  businessObject: "crm/deal",
  businessObjectId: "d-1",
  recordVersion: 3,
  operation: "updated",
  cause: null,
  record: row.record,
  changes: row.changes
})

const hashOf = (row: { readonly record: unknown; readonly changes: unknown }, salts: RowSalts) =>
  contentHash(ledgerRow(asRow(row)), salts).toString("hex")

/** The erased row's parts as the row type takes them: JSON, decoded as the service reads them back. */
const asRow = (row: { readonly record: unknown; readonly changes: unknown }) => ({
  record: row.record === null ? null : decodeRecord(row.record),
  changes: row.changes === null ? null : changesOf(row.changes)
})

const decodeRecord = Schema.decodeUnknownSync(JsonObject)
const changesOf = Schema.decodeUnknownSync(ChangesSchema)
const toJson = Schema.decodeUnknownSync(Schema.Json)

/** Every erased marker's pointer in a part of a row. */
const erasedPointers = (value: unknown, pointer: string): ReadonlyArray<string> => {
  if (isErased(value)) return [pointer]
  if (value === null || typeof value !== "object") return []
  return Object.entries(value).flatMap(([key, member]) => erasedPointers(member, childPointer(pointer, key)))
}

/** Every single value left in clear, with whether it is an entry's id (never erased). */
const clearLeaves = (value: unknown, inEntry: boolean, key: string): ReadonlyArray<{ value: unknown; id: boolean }> => {
  if (isErased(value)) return []
  if (value === null) return []
  if (typeof value !== "object") return [{ value, id: inEntry && key === "id" }]
  if (Array.isArray(value)) return value.flatMap((element: unknown) => clearLeaves(element, true, ""))
  return Object.entries(value).flatMap(([name, member]) => clearLeaves(member, inEntry, name))
}

const isAncestorOrSelf = (ancestor: string, pointer: string) =>
  pointer === ancestor || pointer.startsWith(`${ancestor}/`)

/** What must hold of an erased row, whatever was erased. */
const expectSound = (
  original: GeneratedRow,
  erased: ReturnType<typeof eraseRow>,
  erasedTags: ReadonlyArray<string>
) => {
  expect(hashOf(erased, { salt: null, published: erased.published })).toBe(hashOf(original, rootSalts(original.salt)))
  const text = JSON.stringify([erased.record, erased.changes])
  for (const tag of erasedTags) expect(text).not.toContain(tag)
  const markers = [...erasedPointers(erased.record, "/record"), ...erasedPointers(erased.changes, "/changes")]
  for (const published of erased.published.keys()) {
    for (const marker of markers)
      expect(isAncestorOrSelf(published, marker), `${published} above ${marker}`).toBe(false)
  }
}

/** A snapshot as erasing `path` must leave it, markers as "⊘": written apart from erase.ts, as the spec says. */
const expectedSnapshot = (value: Json, path: FieldPath, inEntry: boolean): Json => {
  const [head, ...rest] = path
  if (head === undefined) return everyValue(value, inEntry)
  if (isJsonArray(value)) return value.map((entry) => expectedSnapshot(entry, path, true))
  if (!isJsonObject(value) || own(value, head) === undefined || (inEntry && head === "id")) return value
  return Object.fromEntries(
    Object.entries(value).map(([key, member]) => [key, key === head ? expectedSnapshot(member, rest, false) : member])
  )
}
const everyValue = (value: Json, inEntry: boolean): Json => {
  if (isJsonArray(value)) return value.map((entry) => everyValue(entry, true))
  if (value === null) return null
  if (!isJsonObject(value)) return "⊘"
  return Object.fromEntries(
    Object.entries(value).map(([key, member]) => [key, inEntry && key === "id" ? member : everyValue(member, false)])
  )
}

/** Markers as "⊘", so two erasures of one value (each with its own commitment) compare equal. */
const plain = (value: unknown): Json => {
  if (isErased(value)) return "⊘"
  if (Array.isArray(value)) return value.map(plain)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, plain(member)]))
  }
  return toJson(value)
}

/** Collections by id and an empty one as none: what a diff applied gives back. */
const canonical = (values: Json): Json =>
  isJsonObject(values)
    ? Object.fromEntries(
        Object.entries(values).flatMap(([name, value]) =>
          isJsonArray(value) && value.length === 0
            ? []
            : [[name, isJsonArray(value) ? [...value].sort((a, b) => idOf(a).localeCompare(idOf(b))) : value]]
        )
      )
    : values
const idOf = (entry: Json) => (isJsonObject(entry) && typeof entry.id === "string" ? entry.id : "")

const all = (named: ReadonlyArray<NamedPath>) => named.map((one) => one.path)
const tagsOf = (named: ReadonlyArray<NamedPath>) => named.flatMap((one) => one.tags)

describe("eraseRow", () => {
  it.prop(
    "keeps the content hash; nothing erased in clear; no published salt above an erased value; the rest unchanged",
    [generatedRow, pathSet],
    ([row, named]) => {
      // No path at all is every value: the next properties.
      if (named.length === 0) return
      const erased = eraseRow(row, rootSalts(row.salt), all(named))
      expectSound(row, erased, tagsOf(named))
      if (row.record !== null) {
        const expected = named.reduce<Json>((value, one) => expectedSnapshot(value, one.path, false), row.record)
        expect(plain(erased.record)).toEqual(expected)
      }
      expect(erased.erasedNow).toBe(
        erasedPointers(erased.record, "").length + erasedPointers(erased.changes, "").length
      )
    },
    { arbitrary: { runs: 400 } }
  )

  it.prop(
    "an erased diff applied to an erased snapshot gives the erased snapshot after it (erasure commutes with the diff)",
    [dealValues, dealValues, pathSet],
    ([before, patch, named]) => {
      if (named.length === 0) return
      const after = mergeValues(before, patch)
      const changes = diffValues(fields, before, after)
      if (changes === null) return
      const salts = rootSalts(Buffer.alloc(16, 7))
      const erasedBefore = plain(eraseRow({ record: before, changes: null }, salts, all(named)).record)
      const erasedAfter = plain(eraseRow({ record: after, changes: null }, salts, all(named)).record)
      const erasedChanges = eraseRow({ record: null, changes }, salts, all(named)).changes
      if (!isJsonObject(erasedBefore) || !isJsonObject(erasedAfter)) throw new Error("a snapshot stays an object")
      const applied = applyChanges(fields, erasedBefore, changesOf(plain(erasedChanges)))
      expect(canonical(applied)).toEqual(canonical(compactObject(erasedAfter)))
    },
    { arbitrary: { runs: 300 } }
  )

  it.prop(
    "every value (no path): only entries' ids are left, and the hash holds",
    [generatedRow],
    ([row]) => {
      const erased = eraseRow(row, rootSalts(row.salt), [])
      expectSound(row, erased, tagsOf(paths))
      const left = [erased.record, erased.changes].flatMap((part) =>
        part === null ? [] : clearLeaves(part, false, "")
      )
      expect(left.filter((leaf) => !leaf.id)).toEqual([])
    },
    { arbitrary: { runs: 300 } }
  )

  it.prop(
    "erasing again, another path or the same: the hash holds, both erasures stay, the same path twice changes nothing",
    [generatedRow, pathSet, pathSet],
    ([row, first, second]) => {
      if (first.length === 0 || second.length === 0) return
      const once = eraseRow(row, rootSalts(row.salt), all(first))
      const stored = { record: once.record, changes: once.changes }
      const twice = eraseRow(asRow(stored), { salt: null, published: once.published }, all(second))
      expectSound(row, twice, [...tagsOf(first), ...tagsOf(second)])
      const again = eraseRow(asRow(stored), { salt: null, published: once.published }, all(first))
      expect(again.erasedNow).toBe(0)
      expect(again.record).toEqual(once.record)
      expect(again.changes).toEqual(once.changes)
    },
    { arbitrary: { runs: 300 } }
  )
})
