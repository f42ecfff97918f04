import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Option, Schema } from "effect"
import { Instant } from "../../src/api/Feed"
import { encodeCursor } from "../../src/audit/Cursor"
import { decodeFeedCursor, encodeFeedCursor } from "../../src/audit/FeedCursor"
import { pageOfWindow } from "../../src/audit/feedWindow"
import { groupByCause } from "../../src/audit/groupByCause"
import type { Cause } from "../../src/api/Cause"

const maxBigint = 9223372036854775807n
const bigIntBetween = (minimum: bigint, maximum: bigint) =>
  Schema.BigInt.check(Schema.isBetweenBigInt({ minimum, maximum }))
const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))
const position = bigIntBetween(0n, maxBigint)

describe("feed cursor", () => {
  it.prop("decode(encode(p)) = p for every position 0..2^63-1", [position], ([p]) => {
    const decoded = decodeFeedCursor(encodeFeedCursor({ position: p }))
    return Option.isSome(decoded) && decoded.value.position === p
  })

  it.prop("is opaque, URL-safe text: base64url, no padding", [position], ([p]) =>
    /^[A-Za-z0-9_-]+$/.test(encodeFeedCursor({ position: p }))
  )

  describe("anything else decodes to none: random text, tampered cursors, timeline cursors, out of range", () => {
    it.prop("random text", [Schema.String.check(Schema.isMaxLength(60))], ([text]) => {
      const decoded = decodeFeedCursor(text)
      // Whatever decodes must be the canonical cursor of its position.
      return Option.isNone(decoded) || encodeFeedCursor(decoded.value) === text
    })

    it.prop("tampered cursors", [position, between(0, 2_147_483_647), between(0, 62)], ([p, index, bit]) => {
      const cursor = encodeFeedCursor({ position: p })
      const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
      const at = index % cursor.length
      const replaced = alphabet[(alphabet.indexOf(cursor[at] ?? "A") + 1 + bit) % 64] ?? "A"
      const tampered = cursor.slice(0, at) + replaced + cursor.slice(at + 1)
      const decoded = decodeFeedCursor(tampered)
      return Option.isNone(decoded) || decoded.value.position !== p
    })

    it.prop("timeline cursors", [bigIntBetween(1n, maxBigint)], ([seq]) =>
      Option.isNone(decodeFeedCursor(encodeCursor({ seq: seq.toString() })))
    )

    it("out of range", () => {
      for (const text of ["feed:", "feed:-1", "feed:01", "feed:9223372036854775808", "feed:1 ", "Feed:1", "feed:1e3"]) {
        expect(decodeFeedCursor(Buffer.from(text).toString("base64url")), text).toEqual(Option.none())
      }
    })
  })
})

describe("a feed page from its scanned window", () => {
  /** A window: positions after `after`, strictly increasing, some of them kept. */
  const window = Arbitrary.schema(
    Schema.Struct({
      after: bigIntBetween(0n, 1_000n),
      gaps: Schema.Array(bigIntBetween(1n, 3n)).check(Schema.isMaxLength(40)),
      keep: Schema.Array(Schema.Boolean).check(Schema.isBetweenLength(40, 40)),
      limit: between(1, 10),
      windowFull: Schema.Boolean
    })
  ).pipe(
    Arbitrary.map(({ after, gaps, keep, limit, windowFull }) => {
      const scanned: Array<bigint> = []
      let at = after
      for (const gap of gaps) {
        at += gap
        scanned.push(at)
      }
      const matched = scanned.filter((_, i) => keep[i]).slice(0, limit + 1)
      return { after, scanned, matched, limit, windowFull }
    })
  )

  it.prop(
    "rows are the first matches, at most limit; the next cursor passes exactly what was served or skipped",
    [window],
    ([{ after, scanned, matched, limit, windowFull }]) => {
      const page = pageOfWindow({
        after,
        limit,
        scanned: scanned.length,
        lastScanned: scanned.at(-1) ?? null,
        windowFull,
        matched,
        positionOf: (p) => p
      })
      expect(page.rows).toEqual(matched.slice(0, limit))
      // Nothing kept below `next` is left unserved, and nothing above it was served.
      const kept = matched.filter((p) => p <= page.next)
      expect(kept).toEqual(page.rows)
      expect(page.next >= after).toBe(true)
      if (matched.length > limit) {
        expect(page.more).toBe(true)
        expect(page.next).toBe(page.rows.at(-1))
      } else {
        expect(page.next).toBe(scanned.at(-1) ?? after)
        expect(page.more).toBe(windowFull)
      }
    }
  )
})

describe("grouping a correlation's rows by unit and cause", () => {
  const cause: Schema.Codec<Cause | null> = Schema.Union([
    Schema.Null,
    Schema.Struct({ kind: Schema.Literal("action"), action: Schema.Literal("crm/deal/close") }),
    Schema.Struct({
      kind: Schema.Literal("event"),
      businessObject: Schema.Literal("crm/deal"),
      businessObjectId: Schema.Literal("d1"),
      operation: Schema.Literal("updated")
    }),
    Schema.Struct({
      kind: Schema.Literal("event"),
      businessObject: Schema.Literal("crm/company"),
      businessObjectId: Schema.Literal("c1"),
      operation: Schema.Literal("updated")
    })
  ])
  const rows = Arbitrary.schema(
    Schema.Array(Schema.Tuple([Schema.Literals(["u1", "u2"]), cause])).check(Schema.isMaxLength(30))
  ).pipe(
    Arbitrary.map((pairs) =>
      pairs.map(([correlationId, rowCause], entry) => ({
        correlationId,
        parentCorrelationId: null,
        cause: rowCause,
        entry
      }))
    )
  )

  it.prop(
    "every row once, groups in order of their first row, rows in order within a group, one group per (unit, cause)",
    [rows],
    ([input]) => {
      const groups = groupByCause(input)
      expect(groups.flatMap((group) => group.entries).sort((a, b) => a - b)).toEqual(input.map((row) => row.entry))
      for (const group of groups) {
        expect([...group.entries]).toEqual([...group.entries].sort((a, b) => a - b))
        for (const entry of group.entries) {
          expect(input[entry]?.correlationId).toBe(group.correlationId)
          expect(input[entry]?.cause).toEqual(group.cause)
        }
      }
      const firsts = groups.map((group) => group.entries[0] ?? -1)
      expect(firsts).toEqual([...firsts].sort((a, b) => a - b))
      const keys = groups.map((group) => `${group.correlationId} ${JSON.stringify(group.cause)}`)
      expect(new Set(keys).size).toBe(keys.length)
    }
  )

  it("causes compare by content, whatever the key order of the stored JSON", () => {
    const a: Cause = { kind: "action", action: "x" }
    const b = Schema.decodeUnknownSync(
      Schema.Union([Schema.Struct({ action: Schema.String, kind: Schema.Literal("action") })])
    )({ action: "x", kind: "action" })
    const groups = groupByCause([
      { correlationId: "u", parentCorrelationId: null, cause: a, entry: 0 },
      { correlationId: "u", parentCorrelationId: null, cause: b, entry: 1 }
    ])
    expect(groups).toHaveLength(1)
  })
})

describe("instants in feed queries", () => {
  const decode = Schema.decodeUnknownOption(Instant)
  it.prop(
    "every instant JavaScript prints (years 1..9999) is accepted",
    [
      Schema.Date.check(
        Schema.isBetweenDate({ minimum: new Date("0001-01-01T00:00:00Z"), maximum: new Date("9999-12-31T23:59:59Z") })
      )
    ],
    ([date]) => Option.isSome(decode(date.toISOString()))
  )
  it("impossible dates and times are refused", () => {
    for (const text of [
      "2026-02-30",
      "2026-13-01",
      "2026-01-01T24:00Z",
      "2026-01-01T10:60:00Z",
      "0000-01-01",
      "2026-01-01T10:00:00+16:00",
      "2026-1-1",
      "yesterday"
    ]) {
      expect(decode(text), text).toEqual(Option.none())
    }
  })
})
