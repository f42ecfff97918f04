import { Arbitrary, Schema } from "effect"
import type { Json, JsonObject } from "../../../src/api/Json"
import type { Field, Fields } from "../../../src/api/Field"
import { boolean, constantFrom, integer, someOf, weighted } from "../../support/arbitraries"

/** Member names; never `id` (a collection entry's own key). */
const names = ["a", "b", "c", "d", "e"] as const

const scalarField: Arbitrary.Arbitrary<Field> = constantFrom<Field>(
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
export const fieldsArb = (depth = 2): Arbitrary.Arbitrary<Fields> =>
  someOf(names.map((name) => fieldArb(depth).pipe(Arbitrary.map((field) => [name, field] as const)))).pipe(
    Arbitrary.map((members): Fields => Object.fromEntries(members))
  )

const fieldArb = (depth: number): Arbitrary.Arbitrary<Field> =>
  depth === 0
    ? scalarField
    : weighted(
        { weight: 4, arbitrary: scalarField },
        {
          weight: 1,
          arbitrary: fieldsArb(depth - 1).pipe(Arbitrary.map((fields): Field => ({ kind: "struct", fields })))
        },
        {
          weight: 1,
          arbitrary: fieldsArb(depth - 1).pipe(Arbitrary.map((fields): Field => ({ kind: "collection", fields })))
        }
      )

// Strings that look like decimals and dates must stay strings in a string field.
const text = weighted<string>(
  { weight: 1, arbitrary: Arbitrary.schema(Schema.String.check(Schema.isMaxLength(6))) },
  { weight: 1, arbitrary: constantFrom("12.50", "2026-03-01", "0", "2026-03-01T09:30:00Z") }
)
const digit = integer(0, 9)
/** An integer of up to 21 digits (|n| < 10^21), as decimal digits and a sign. */
const bigDigits = Arbitrary.all({
  negative: boolean,
  digits: Arbitrary.array(digit, { minLength: 1, maxLength: 21 })
}).pipe(Arbitrary.map(({ negative, digits }) => ({ negative, n: BigInt(digits.join("")) })))
const decimal = weighted<string>(
  { weight: 1, arbitrary: constantFrom("0", "0.00", "-1.50", "1250.00", "12345678901234567890.123456789") },
  {
    weight: 1,
    arbitrary: Arbitrary.all({ value: bigDigits, scale: integer(0, 6) }).pipe(
      Arbitrary.map(({ value: { negative, n }, scale }) => {
        const digits = n.toString().padStart(scale + 1, "0")
        const whole = digits.slice(0, digits.length - scale)
        const body = scale === 0 ? whole : `${whole}.${digits.slice(digits.length - scale)}`
        return negative && n !== 0n ? `-${body}` : body
      })
    )
  }
)
const instant = integer(Date.parse("1900-01-01T00:00:00Z"), Date.parse("2100-12-31T23:59:59Z")).pipe(
  Arbitrary.map((ms) => new Date(ms))
)
const date = weighted<string>(
  { weight: 1, arbitrary: constantFrom("2024-02-29", "2000-01-01") },
  { weight: 1, arbitrary: instant.pipe(Arbitrary.map((d) => d.toISOString().slice(0, 10))) }
)
/** `Date#toISOString` form: milliseconds, so a wire datetime survives the round trip through a `Date` exactly. */
const datetime = instant.pipe(Arbitrary.map((d) => d.toISOString()))
const absentOr = (arbitrary: Arbitrary.Arbitrary<Json>): Arbitrary.Arbitrary<Json> =>
  weighted<Json>({ weight: 1, arbitrary: Arbitrary.Constant(null) }, { weight: 4, arbitrary })
const uuid = Arbitrary.schema(Schema.String.check(Schema.isUUID()))

/** A wire value of `field`, as the server writes it. */
export const valueArb = (field: Field): Arbitrary.Arbitrary<Json> => {
  switch (field.kind) {
    case "string":
      return text
    case "number":
      return weighted<number>(
        { weight: 1, arbitrary: Arbitrary.schema(Schema.Int) },
        { weight: 1, arbitrary: Arbitrary.schema(Schema.Finite) }
      )
    case "boolean":
      return boolean
    case "decimal":
      return decimal
    case "date":
      return date
    case "datetime":
      return datetime
    // Mostly a declared option; sometimes one the field has dropped since, which still reads as written.
    case "choice": {
      const [first = "", ...rest] = field.options
      return weighted<string>({ weight: 4, arbitrary: constantFrom(first, ...rest) }, { weight: 1, arbitrary: text })
    }
    // A record id, live or deleted since: hydration cannot tell and does not ask.
    case "link":
      return weighted<string>(
        { weight: 1, arbitrary: uuid },
        { weight: 1, arbitrary: Arbitrary.Constant("0190a3b4-0000-7000-8000-000000000001") }
      )
    case "struct":
      return valuesArb(field.fields)
    // Distinct entry ids, in any order.
    case "collection":
      return someOf(
        ["e1", "e2", "e3", "e4"].map((id) =>
          Arbitrary.all({ rank: integer(0, 1_000), members: valuesArb(field.fields) }).pipe(
            Arbitrary.map(({ rank, members }) => ({ rank, entry: { id, ...members } }))
          )
        )
      ).pipe(Arbitrary.map((entries): Json => entries.sort((a, b) => a.rank - b.rank).map(({ entry }) => entry)))
  }
}

/** Wire values of a field list: any member may be absent or null; sometimes an undeclared member (drift). */
export const valuesArb = (fields: Fields): Arbitrary.Arbitrary<JsonObject> => {
  const legacy = absentOr(
    weighted<Json>(
      { weight: 1, arbitrary: text },
      { weight: 1, arbitrary: Arbitrary.schema(Schema.Int) },
      { weight: 1, arbitrary: constantFrom<Json>({ x: "1.00" }, ["2026-01-01"]) }
    )
  )
  const members = [...Object.entries(fields).map(([name, field]) => [name, absentOr(valueArb(field))] as const)]
  return someOf(
    [...members, ["legacy", legacy] as const].map(([name, arbitrary]) =>
      arbitrary.pipe(Arbitrary.map((value) => [name, value] as const))
    )
  ).pipe(Arbitrary.map((entries): JsonObject => Object.fromEntries(entries)))
}

/** A schema and values written against it. */
export const schemaAndValues = fieldsArb().pipe(
  Arbitrary.flatMap((fields) => valuesArb(fields).pipe(Arbitrary.map((values) => ({ fields, values }))))
)

/**
 * A schema and two values, `after` often sharing fields and collection
 * entries with `before`, so that diffs hold every kind of change.
 */
export const schemaAndPair = fieldsArb().pipe(
  Arbitrary.flatMap((fields) =>
    Arbitrary.all([
      valuesArb(fields),
      valuesArb(fields),
      someOf([...Object.keys(fields), "legacy"].map((name) => Arbitrary.Constant(name)))
    ]).pipe(
      Arbitrary.map(([before, other, kept]) => {
        const after: Record<string, Json> = { ...other }
        for (const name of kept) {
          const value = before[name]
          if (value === undefined) delete after[name]
          else after[name] = value
        }
        return { fields, before, after }
      })
    )
  )
)
