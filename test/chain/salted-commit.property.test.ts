import { createHash } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Arbitrary } from "effect"
import { canonicalJson } from "../../src/chain/canonicalJson"
import { childSalt, commit } from "../../src/chain/commitments"
import { Domain, int64, sha256 } from "../../src/chain/digestBytes"
import type { LedgerRow } from "../../src/chain/rowHash"
import { contentHash, linkHash, rootSalts } from "../../src/chain/rowHash"
import { commitBelow } from "../../src/chain/saltedCommit"
import type { Json } from "../../src/api/Json"
import { isJsonObject } from "../../src/api/Json"
import { integer, jsonValue, oneOf, text } from "../support/arbitraries"

/**
 * The paths verification and the write path hash a row by
 * (src/chain/saltedCommit.ts, `contentHash`'s written-out content JSON, the
 * inputs written into src/chain/hashInput.ts) against the reference
 * (`commit`, `canonicalJson`, `sha256` of the parts, docs/ledger.md
 * "Formats"): the same bytes for every value, salt and row, so whichever
 * computed a hash, the other recomputes it.
 */

const noneSalts = new Map<string, Uint8Array>()
const salt = Arbitrary.map(Arbitrary.array(integer(0, 255), { minLength: 16, maxLength: 32 }), (bytes) =>
  Buffer.from(bytes)
)

/** `commit` of `value` as the member `key` of a node salted `parent`: what `commitBelow` must give. */
const reference = (value: unknown, parent: Buffer, key: string) =>
  commit(value, `/${key}`, childSalt(parent, key), noneSalts).toString("hex")

/** Keys and strings that UTF-8 encodes in 1 to 4 bytes, and a lone surrogate (written as U+FFFD). */
const awkward = {
  "": "",
  a: "plain",
  "é~/": "é",
  "☃": "snow ☃",
  "😀": "😀 face",
  "\ud800": "lone \udc00",
  ["long key ".repeat(40)]: "long value ".repeat(200),
  list: [null, true, false, 0, -1.5, 1e21, "x", [], {}, [[]], { nested: { deeper: [1, { x: "y" }] } }],
  gone: undefined
}

describe("commitBelow", () => {
  it.prop(
    "the reference commitment's bytes, for any JSON value, salt and key",
    [jsonValue, salt, oneOf(Arbitrary.Constant("record"), Arbitrary.Constant("changes"), text(20))],
    ([value, parent, key]) => {
      expect(commitBelow(value, parent, key)).toBe(reference(value, parent, key))
    },
    { arbitrary: { runs: 500 } }
  )

  it("keys and strings of every UTF-8 length, a lone surrogate, long ones, nested lists, an undefined member", () => {
    const parent = Buffer.from("000102030405060708090a0b0c0d0e0f", "hex")
    expect(commitBelow(awkward, parent, "record")).toBe(reference(awkward, parent, "record"))
    // Pinned by a third implementation: the format may not drift, whichever implementation computes it.
    const value = { a: 1, "☃": ["x", null, { b: false }] }
    expect(commitBelow(value, parent, "changes")).toBe(commitByHand(value, childSalt(parent, "changes")))
  })

  it("a salt that is a view into a larger buffer: only its own bytes", () => {
    const pool = Buffer.from("ffffffff000102030405060708090a0b0c0d0e0fffffffff", "hex")
    const view = pool.subarray(4, 20)
    expect(commitBelow({ a: "b" }, view, "record")).toBe(reference({ a: "b" }, Buffer.from(view), "record"))
  })
})

const maybe = <A>(arbitrary: Arbitrary.Arbitrary<A>) =>
  oneOf<A | null | undefined>(arbitrary, Arbitrary.Constant(null), Arbitrary.Constant(undefined))

const recordOf = (value: Json | undefined) => (isJsonObject(value) ? value : null)

/** Rows as the write path and the database give them, and with members a caller left undefined. */
const row = Arbitrary.map(
  Arbitrary.all({
    id: text(40),
    actor: maybe(jsonValue),
    parent: maybe(text(40)),
    businessObject: text(30),
    businessObjectId: text(40),
    recordVersion: maybe(integer(0, 1_000_000)),
    operation: text(12),
    cause: maybe(jsonValue),
    record: maybe(jsonValue),
    changes: maybe(Arbitrary.all({ field: text(10), from: jsonValue, to: jsonValue }))
  }),
  (drawn): LedgerRow => ({
    id: drawn.id,
    actor: drawn.actor,
    correlationId: `${drawn.id}-c`,
    parentCorrelationId: drawn.parent ?? null,
    businessObject: drawn.businessObject,
    businessObjectId: drawn.businessObjectId,
    recordVersion: drawn.recordVersion ?? null,
    operation: drawn.operation,
    cause: drawn.cause,
    record: recordOf(drawn.record ?? undefined),
    changes: drawn.changes ? { [drawn.changes.field]: { from: drawn.changes.from, to: drawn.changes.to } } : null
  })
)

/** docs/ledger.md "Formats", Content: SHA-256(04 ‖ canonical JSON of the row with its parts' commitments). */
const referenceContent = (ledgerRow: LedgerRow, rowSalt: Buffer) =>
  sha256(
    Domain.content,
    canonicalJson({
      v: 1,
      id: ledgerRow.id,
      actor: ledgerRow.actor,
      correlationId: ledgerRow.correlationId,
      parentCorrelationId: ledgerRow.parentCorrelationId,
      businessObject: ledgerRow.businessObject,
      businessObjectId: ledgerRow.businessObjectId,
      recordVersion: ledgerRow.recordVersion,
      operation: ledgerRow.operation,
      cause: ledgerRow.cause,
      record: ledgerRow.record === null ? null : reference(ledgerRow.record, rowSalt, "record"),
      changes: ledgerRow.changes === null ? null : reference(ledgerRow.changes, rowSalt, "changes")
    })
  ).toString("hex")

describe("contentHash", () => {
  it.prop(
    "the canonical JSON of the row's content, hashed: for any row, whatever it leaves undefined",
    [row, salt],
    ([ledgerRow, rowSalt]) => {
      expect(contentHash(ledgerRow, rootSalts(rowSalt)).toString("hex")).toBe(referenceContent(ledgerRow, rowSalt))
    },
    { arbitrary: { runs: 300 } }
  )
})

describe("linkHash", () => {
  it.prop(
    "SHA-256(05 ‖ previous link ‖ position ‖ microseconds ‖ content hash), 64-bit big-endian",
    [salt, salt, integer(0, Number.MAX_SAFE_INTEGER), integer(0, Number.MAX_SAFE_INTEGER)],
    ([previous, content, position, at]) => {
      const expected = sha256(Domain.link, previous, int64(BigInt(position)), int64(BigInt(at)), content)
      expect(linkHash(previous, BigInt(position), BigInt(at), content).toString("hex")).toBe(expected.toString("hex"))
    },
    { arbitrary: { runs: 200 } }
  )
})

/** docs/ledger.md "Formats", spelled out with a hash object per node: a third implementation to pin the bytes. */
const commitByHand = (value: unknown, nodeSalt: Buffer): string => {
  const sha = (...parts: ReadonlyArray<Buffer | string>) => {
    const hash = createHash("sha256")
    for (const part of parts) hash.update(part)
    return hash.digest()
  }
  const child = (parent: Buffer, key: string) => sha(Buffer.of(3), parent, key)
  const node = (v: unknown, s: Buffer): Buffer => {
    if (Array.isArray(v)) return sha(Buffer.of(2), ...v.map((element, i) => node(element, child(s, String(i)))))
    if (v !== null && typeof v === "object") {
      const parts: Array<Buffer> = [Buffer.of(1)]
      for (const [key, member] of Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
        const length = Buffer.alloc(4)
        length.writeUInt32BE(Buffer.byteLength(key))
        parts.push(length, Buffer.from(key), node(member, child(s, key)))
      }
      return sha(...parts)
    }
    return sha(Buffer.of(0), s, JSON.stringify(v))
  }
  return node(value, nodeSalt).toString("hex")
}
