import { FastCheck as fc } from "effect"
import type { Json, JsonObject } from "../../../src/api/Json"
import type { Field, Fields } from "../../../src/api/Field"

/** Member names; never `id` (a collection entry's own key). */
const names = ["a", "b", "c", "d", "e"] as const

const scalarField: fc.Arbitrary<Field> = fc.constantFrom<Field>(
  { kind: "string" },
  { kind: "number" },
  { kind: "boolean" },
  { kind: "decimal" },
  { kind: "date" },
  { kind: "datetime" },
  { kind: "choice", options: ["lead", "won", "lost"] },
  { kind: "link", target: "test/other" },
  { kind: "string", required: true },
  { kind: "choice", options: ["12.50", "2026-03-01"], required: true }
)

/** Random field lists, structs and collections nested up to `depth` levels. */
export const fieldsArb = (depth = 2): fc.Arbitrary<Fields> =>
  fc.dictionary(fc.constantFrom(...names), fieldArb(depth), { maxKeys: 5, noNullPrototype: true })

const fieldArb = (depth: number): fc.Arbitrary<Field> =>
  depth === 0
    ? scalarField
    : fc.oneof(
        { weight: 4, arbitrary: scalarField },
        { weight: 1, arbitrary: fieldsArb(depth - 1).map((fields): Field => ({ kind: "struct", fields })) },
        { weight: 1, arbitrary: fieldsArb(depth - 1).map((fields): Field => ({ kind: "collection", fields })) }
      )

// Strings that look like decimals and dates must stay strings in a string field.
const text = fc.oneof(fc.string({ maxLength: 6 }), fc.constantFrom("12.50", "2026-03-01", "0", "2026-03-01T09:30:00Z"))
const decimal = fc.oneof(
  fc.constantFrom("0", "0.00", "-1.50", "1250.00", "12345678901234567890.123456789"),
  fc.tuple(fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }), fc.integer({ min: 0, max: 6 })).map(([n, scale]) => {
    const digits = (n < 0n ? -n : n).toString().padStart(scale + 1, "0")
    const whole = digits.slice(0, digits.length - scale)
    const body = scale === 0 ? whole : `${whole}.${digits.slice(digits.length - scale)}`
    return n < 0n ? `-${body}` : body
  })
)
const instant = fc.date({
  min: new Date("1900-01-01T00:00:00Z"),
  max: new Date("2100-12-31T23:59:59Z"),
  noInvalidDate: true
})
const date = fc.oneof(
  fc.constantFrom("2024-02-29", "2000-01-01"),
  instant.map((d) => d.toISOString().slice(0, 10))
)
/** `Date#toISOString` form: milliseconds, so a wire datetime survives the round trip through a `Date` exactly. */
const datetime = instant.map((d) => d.toISOString())
const absentOr = (arb: fc.Arbitrary<Json>) => fc.option(arb, { nil: null, freq: 5 })

/** A wire value of `field`, as the server writes it. */
export const valueArb = (field: Field): fc.Arbitrary<Json> => {
  switch (field.kind) {
    case "string":
      return text
    case "number":
      return fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))
    case "boolean":
      return fc.boolean()
    case "decimal":
      return decimal
    case "date":
      return date
    case "datetime":
      return datetime
    // Mostly a declared option; sometimes one the field has dropped since, which still reads as written.
    case "choice":
      return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...field.options) }, { weight: 1, arbitrary: text })
    // A record id, live or deleted since: hydration cannot tell and does not ask.
    case "link":
      return fc.oneof(fc.uuid(), fc.constantFrom("0190a3b4-0000-7000-8000-000000000001"))
    case "struct":
      return valuesArb(field.fields)
    case "collection":
      return fc
        .uniqueArray(
          fc
            .tuple(fc.constantFrom("e1", "e2", "e3", "e4"), valuesArb(field.fields))
            .map(([id, members]) => ({ id, ...members })),
          { selector: (entry) => entry.id, maxLength: 4 }
        )
        .map((entries): Json => entries)
  }
}

/** Wire values of a field list: any member may be absent or null; sometimes an undeclared member (drift). */
export const valuesArb = (fields: Fields): fc.Arbitrary<JsonObject> => {
  const members: Record<string, fc.Arbitrary<Json>> = {}
  for (const [name, field] of Object.entries(fields)) members[name] = absentOr(valueArb(field))
  members.legacy = absentOr(fc.oneof(text, fc.integer(), fc.constantFrom<Json>({ x: "1.00" }, ["2026-01-01"])))
  return fc.record(members, { requiredKeys: [] }).map((values) => {
    const out: Record<string, Json> = {}
    for (const [name, value] of Object.entries(values)) if (value !== undefined) out[name] = value
    return out
  })
}

/** A schema and values written against it. */
export const schemaAndValues = fieldsArb().chain((fields) => valuesArb(fields).map((values) => ({ fields, values })))

/**
 * A schema and two values, `after` often sharing fields and collection
 * entries with `before`, so that diffs hold every kind of change.
 */
export const schemaAndPair = fieldsArb().chain((fields) =>
  fc
    .tuple(valuesArb(fields), valuesArb(fields), fc.subarray([...Object.keys(fields), "legacy"]))
    .map(([before, other, kept]) => {
      const after: Record<string, Json> = { ...other }
      for (const name of kept) {
        const value = before[name]
        if (value === undefined) delete after[name]
        else after[name] = value
      }
      return { fields, before, after }
    })
)
