import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc, Schema } from "effect"
import { applyChanges, diffValues } from "../../src/diff"
import { Changes, isValueChange } from "../../src/api/Changes"
import type { RecordValues } from "../../src/api/Json"
import { crm } from "../../src/plugins/crm"
import type { Fields } from "../../src/api/Field"

const dealFields: Fields = crm.businessObjects.deal?.fields ?? {}

// Small domains, so that equal values (and unchanged fields or entries) come up often.
const absentOr = <A>(arb: fc.Arbitrary<A>) => fc.option(arb, { nil: null, freq: 4 })
const text = fc.constantFrom("a", "b", "Widget", "")
const decimal = fc.oneof(
  fc.constantFrom("0.00", "12.50", "9.99"),
  fc.integer({ min: -100_000, max: 100_000 }).map((n) => (n / 100).toFixed(2))
)
const date = fc.oneof(
  fc.constantFrom("2025-01-01", "2025-12-31"),
  fc
    .date({ min: new Date("2000-01-01"), max: new Date("2040-12-31"), noInvalidDate: true })
    .map((d) => d.toISOString().slice(0, 10))
)
const address = fc.record(
  {
    street: absentOr(text),
    city: absentOr(fc.constantFrom("Lyon", "Paris")),
    country: absentOr(fc.constantFrom("FR", "DE"))
  },
  { requiredKeys: [] }
)
const lineItem = fc.record(
  {
    id: fc.constantFrom("l1", "l2", "l3", "l4", "l5"),
    product: absentOr(text),
    quantity: absentOr(fc.integer({ min: 0, max: 3 })),
    price: absentOr(fc.constantFrom("1.00", "2.50"))
  },
  { requiredKeys: ["id"] }
)
const lineItems = fc.uniqueArray(lineItem, { selector: (entry) => entry.id, maxLength: 5 })
const legacy = fc.oneof(
  fc.constantFrom("x", "y"),
  fc.integer({ min: 0, max: 2 }),
  fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 })
)

/** crm/deal-shaped values: every field may be absent or null; `legacy` is an undeclared field (schema drift). */
const deal = fc.record(
  {
    title: absentOr(text),
    // A choice: its options, and one dropped from them since (diffed like any string).
    stage: absentOr(fc.constantFrom("open", "negotiation", "won", "lost", "closed")),
    amount: absentOr(decimal),
    closeDate: absentOr(date),
    // A link: record ids, one of them perhaps deleted since (diffed like any string).
    company: absentOr(
      fc.oneof(
        {
          weight: 4,
          arbitrary: fc.constantFrom("0190a3b4-0000-7000-8000-000000000a0e", "0190a3b4-0000-7000-8000-000000000b0b")
        },
        { weight: 1, arbitrary: fc.uuid() }
      )
    ),
    address: absentOr(address),
    lineItems: absentOr(lineItems),
    legacy: absentOr(legacy)
  },
  { requiredKeys: [] }
)
type Deal = typeof deal extends fc.Arbitrary<infer A> ? A : never
const keys = ["title", "stage", "amount", "closeDate", "company", "address", "lineItems", "legacy"] as const

/** A pair (a, b) where b often shares fields and entries with a, so every kind of change shows up. */
const pair: fc.Arbitrary<[Deal, Deal]> = fc
  .tuple(deal, deal, fc.subarray([...keys]), fc.boolean())
  .map(([a, other, kept, shareEntries]) => {
    const b: Deal = { ...other }
    for (const key of kept) {
      if (key in a) Object.assign(b, { [key]: a[key] })
      else delete b[key]
    }
    if (shareEntries && a.lineItems && b.lineItems) {
      // Half of b's entries, plus a's entries verbatim: unchanged, modified, added and removed entries all occur.
      const ids = new Set(b.lineItems.map((entry) => entry.id))
      b.lineItems = [...b.lineItems.filter((_, i) => i % 2 === 0), ...a.lineItems.filter((entry) => !ids.has(entry.id))]
    }
    return [a, b]
  })

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Drops null members and sorts keys, at every depth: equal values then print the same. */
const canonical = (value: unknown): unknown =>
  Array.isArray(value)
    ? value.map(canonical)
    : isObject(value)
      ? Object.fromEntries(
          Object.keys(value)
            .sort()
            .filter((k) => value[k] !== null && value[k] !== undefined)
            .map((k) => [k, canonical(value[k])])
        )
      : value

/** The normal form: canonical, lineItems sorted by id, an empty collection absent. */
const normalize = (values: RecordValues): unknown => {
  const { lineItems, ...rest } = values
  const items = entries(lineItems).sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
  return canonical(items.length > 0 ? { ...rest, lineItems: items } : rest)
}

const entries = (value: unknown): Array<{ readonly id: string }> =>
  Array.isArray(value)
    ? value.filter((entry): entry is { id: string } => isObject(entry) && typeof entry.id === "string")
    : []

/** Every change at any depth, with its nested diffs. */
const walk = (changes: Changes, visit: (change: Changes[string]) => void): void => {
  for (const change of Object.values(changes)) {
    visit(change)
    if (!isValueChange(change)) for (const entry of change.modified ?? []) walk(entry.changes, visit)
  }
}

const runs = { fastCheck: { numRuns: 500 } }

describe("diffValues and applyChanges on crm/deal-shaped values", () => {
  it.prop(
    "diff(a, a) is null",
    [deal],
    ([a]) => {
      expect(diffValues(dealFields, a, a)).toBeNull()
      expect(diffValues(dealFields, a, structuredClone(a))).toBeNull()
    },
    runs
  )

  it.prop(
    "apply(a, diff(a, b)) equals b in normal form",
    [pair],
    ([[a, b]]) => {
      expect(normalize(applyChanges(dealFields, a, diffValues(dealFields, a, b)))).toEqual(normalize(b))
    },
    runs
  )

  it.prop(
    "diff(a, b) is null iff a equals b in normal form",
    [pair],
    ([[a, b]]) => {
      const equal = JSON.stringify(normalize(a)) === JSON.stringify(normalize(b))
      expect(diffValues(dealFields, a, b) === null).toBe(equal)
    },
    runs
  )

  it.prop(
    "every diff is a valid Changes: no empty bucket or nested diff, no ValueChange with from equal to",
    [pair],
    ([[a, b]]) => {
      const changes = diffValues(dealFields, a, b)
      if (changes === null) return
      expect(() => Schema.decodeUnknownSync(Changes)(changes)).not.toThrow()
      expect(Schema.is(Changes)(changes)).toBe(true)
      expect(Object.keys(changes).length).toBeGreaterThan(0)
      walk(changes, (change) => {
        if (isValueChange(change)) {
          expect(change.from).not.toEqual(change.to)
          return
        }
        expect(Object.keys(change).length).toBeGreaterThan(0)
        for (const bucket of [change.added, change.modified, change.removed]) {
          if (bucket !== undefined) expect(bucket.length).toBeGreaterThan(0)
        }
        for (const entry of change.modified ?? []) expect(Object.keys(entry.changes).length).toBeGreaterThan(0)
        for (const entry of change.removed ?? []) expect(Object.keys(entry)).toEqual(["id"])
        for (const entry of change.added ?? []) expect(entry.values).not.toHaveProperty("id")
      })
    },
    runs
  )
})
