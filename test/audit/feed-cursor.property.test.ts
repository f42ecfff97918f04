import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, Option, Schema } from "effect"
import { Instant } from "../../src/api/Feed"
import { encodeCursor } from "../../src/audit/Cursor"
import { decodeFeedCursor, encodeFeedCursor } from "../../src/audit/FeedCursor"
import { pageOfWindow } from "../../src/audit/feedWindow"
import { groupByCause } from "../../src/audit/groupByCause"
import type { Cause } from "../../src/api/Cause"

const maxBigint = 9223372036854775807n
const position = fc.bigInt({ min: 0n, max: maxBigint })

describe("feed cursor", () => {
  it("decode(encode(p)) = p for every position 0..2^63-1", () => {
    fc.assert(
      fc.property(position, (p) => {
        const decoded = decodeFeedCursor(encodeFeedCursor({ position: p }))
        return Option.isSome(decoded) && decoded.value.position === p
      })
    )
  })

  it("is opaque, URL-safe text: base64url, no padding", () => {
    fc.assert(fc.property(position, (p) => /^[A-Za-z0-9_-]+$/.test(encodeFeedCursor({ position: p }))))
  })

  it("anything else decodes to none: random text, tampered cursors, timeline cursors, out of range", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 60 }), (text) => {
        const decoded = decodeFeedCursor(text)
        // Whatever decodes must be the canonical cursor of its position.
        return Option.isNone(decoded) || encodeFeedCursor(decoded.value) === text
      })
    )
    fc.assert(
      fc.property(position, fc.nat(), fc.integer({ min: 0, max: 62 }), (p, index, bit) => {
        const cursor = encodeFeedCursor({ position: p })
        const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
        const at = index % cursor.length
        const replaced = alphabet[(alphabet.indexOf(cursor[at] ?? "A") + 1 + bit) % 64] ?? "A"
        const tampered = cursor.slice(0, at) + replaced + cursor.slice(at + 1)
        const decoded = decodeFeedCursor(tampered)
        return Option.isNone(decoded) || decoded.value.position !== p
      })
    )
    fc.assert(
      fc.property(fc.bigInt({ min: 1n, max: maxBigint }), (seq) =>
        Option.isNone(decodeFeedCursor(encodeCursor({ seq: seq.toString() })))
      )
    )
    for (const text of ["feed:", "feed:-1", "feed:01", "feed:9223372036854775808", "feed:1 ", "Feed:1", "feed:1e3"]) {
      expect(decodeFeedCursor(Buffer.from(text).toString("base64url")), text).toEqual(Option.none())
    }
  })
})

describe("a feed page from its scanned window", () => {
  /** A window: positions after `after`, strictly increasing, some of them kept. */
  const window = fc
    .record({
      after: fc.bigInt({ min: 0n, max: 1_000n }),
      gaps: fc.array(fc.bigInt({ min: 1n, max: 3n }), { maxLength: 40 }),
      keep: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
      limit: fc.integer({ min: 1, max: 10 }),
      windowFull: fc.boolean()
    })
    .map(({ after, gaps, keep, limit, windowFull }) => {
      const scanned: Array<bigint> = []
      let at = after
      for (const gap of gaps) {
        at += gap
        scanned.push(at)
      }
      const matched = scanned.filter((_, i) => keep[i]).slice(0, limit + 1)
      return { after, scanned, matched, limit, windowFull }
    })

  it("rows are the first matches, at most limit; the next cursor passes exactly what was served or skipped", () => {
    fc.assert(
      fc.property(window, ({ after, scanned, matched, limit, windowFull }) => {
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
      })
    )
  })
})

describe("grouping a correlation's rows by unit and cause", () => {
  const cause = fc.constantFrom<Cause | null>(
    null,
    { kind: "action", action: "crm/deal/close" },
    { kind: "event", businessObject: "crm/deal", businessObjectId: "d1", operation: "updated" },
    { kind: "event", businessObject: "crm/company", businessObjectId: "c1", operation: "updated" }
  )
  const rows = fc.array(fc.tuple(fc.constantFrom("u1", "u2"), cause), { maxLength: 30 }).map((pairs) =>
    pairs.map(([correlationId, rowCause], entry) => ({
      correlationId,
      parentCorrelationId: null,
      cause: rowCause,
      entry
    }))
  )

  it("every row once, groups in order of their first row, rows in order within a group, one group per (unit, cause)", () => {
    fc.assert(
      fc.property(rows, (input) => {
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
      })
    )
  })

  it("causes compare by content, whatever the key order of the stored JSON", () => {
    const a: Cause = { kind: "action", action: "x" }
    const b = Schema.decodeUnknownSync(
      Schema.Union(Schema.Struct({ action: Schema.String, kind: Schema.Literal("action") }))
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
  it("every instant JavaScript prints (years 1..9999) is accepted", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }),
        (date) => Option.isSome(decode(date.toISOString()))
      )
    )
  })
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
