import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { applyChanges, diffValues } from "../../src/diff"
import { Changes, isValueChange } from "../../src/api/Changes"
import type { RecordValues } from "../../src/api/Json"
import { crm } from "../../src/plugins/crm"
import type { Fields } from "../../src/api/Field"
import { boolean, constantFrom, integer, oneOf, option, someKeys, uniqueArray, weighted } from "../support/arbitraries"

const dealFields: Fields = crm.businessObjects.deal?.fields ?? {}

// Small domains, so that equal values (and unchanged fields or entries) come up often.
const absentOr = <A>(arbitrary: Arbitrary.Arbitrary<A>) => option(arbitrary, { nil: null, freq: 4 })
const text = constantFrom("a", "b", "Widget", "")
const decimal = oneOf(
  constantFrom("0.00", "12.50", "9.99"),
  Arbitrary.map(integer(-100_000, 100_000), (n) => (n / 100).toFixed(2))
)
const dayOf2000 = Date.UTC(2000, 0, 1) / 86_400_000
const dayOf2040 = Date.UTC(2040, 11, 31) / 86_400_000
const date = oneOf(
  constantFrom("2025-01-01", "2025-12-31"),
  Arbitrary.map(integer(dayOf2000, dayOf2040), (day) => new Date(day * 86_400_000).toISOString().slice(0, 10))
)
const address = someKeys(
  Arbitrary.all({
    street: absentOr(text),
    city: absentOr(constantFrom("Lyon", "Paris")),
    country: absentOr(constantFrom("FR", "DE"))
  }),
  ["street", "city", "country"]
)
const lineItem = Arbitrary.map(
  Arbitrary.all([
    constantFrom("l1", "l2", "l3", "l4", "l5"),
    someKeys(
      Arbitrary.all({
        product: absentOr(text),
        quantity: absentOr(integer(0, 3)),
        price: absentOr(constantFrom("1.00", "2.50"))
      }),
      ["product", "quantity", "price"]
    )
  ]),
  ([id, members]) => ({ ...members, id })
)
const lineItems = uniqueArray(lineItem, (entry) => entry.id, { maxLength: 5 })
const legacy = oneOf<string | number | Array<number>>(
  constantFrom("x", "y"),
  integer(0, 2),
  Arbitrary.array(integer(0, 2), { maxLength: 2 })
)
const uuid = Arbitrary.schema(Schema.String.check(Schema.isUUID()))

const keys = ["title", "stage", "amount", "closeDate", "company", "address", "lineItems", "legacy"] as const

/** crm/deal-shaped values: every field may be absent or null; `legacy` is an undeclared field (schema drift). */
const deal = someKeys(
  Arbitrary.all({
    title: absentOr(text),
    // A choice: its options, and one dropped from them since (diffed like any string).
    stage: absentOr(constantFrom("open", "negotiation", "won", "lost", "closed")),
    amount: absentOr(decimal),
    closeDate: absentOr(date),
    // A link: record ids, one of them perhaps deleted since (diffed like any string).
    company: absentOr(
      weighted<string>(
        {
          weight: 4,
          arbitrary: constantFrom("0190a3b4-0000-7000-8000-000000000a0e", "0190a3b4-0000-7000-8000-000000000b0b")
        },
        { weight: 1, arbitrary: uuid }
      )
    ),
    address: absentOr(address),
    lineItems: absentOr(lineItems),
    legacy: absentOr(legacy)
  }),
  keys
)
type Deal = typeof deal extends Arbitrary.Arbitrary<infer A> ? A : never

/** A pair (a, b) where b often shares fields and entries with a, so every kind of change shows up. */
const pair: Arbitrary.Arbitrary<[Deal, Deal]> = Arbitrary.map(
  Arbitrary.all([deal, deal, Arbitrary.array(boolean, { minLength: keys.length, maxLength: keys.length }), boolean]),
  ([a, other, keeps, shareEntries]) => {
    const b: Deal = { ...other }
    const kept = keys.filter((_, index) => keeps[index] === true)
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
  }
)

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

const runs = { arbitrary: { runs: 500 } }

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
