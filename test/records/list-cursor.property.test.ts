import { describe, expect, it } from "@effect/vitest"
import { Option, Schema } from "effect"
import { field } from "../../src/api/Field"
import { formatFilter, parseFilter } from "../../src/api/RecordQuery"
import { decodeListCursor, encodeListCursor } from "../../src/records/ListCursor"
import { planList, searchQuery } from "../../src/records/ListPlan"

/**
 * The list cursor and plan (docs/web.md, "Lists"), as properties over
 * generated input (Effect's `it.prop`, the project's property testing).
 */

const Uuid = Schema.String.check(Schema.isPattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/))
const Cursor = Schema.Struct({
  sort: Schema.String,
  order: Schema.Literals(["asc", "desc"]),
  key: Schema.NullOr(Schema.String),
  id: Uuid
})
const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

describe("list cursor", () => {
  it.prop("decode(encode(c)) = c, as URL-safe base64url", [Cursor], ([cursor]) => {
    const text = encodeListCursor(cursor)
    expect(text).toMatch(/^[A-Za-z0-9_-]+$/)
    expect(decodeListCursor(text)).toEqual(Option.some(cursor))
  })

  it.prop(
    "any other text decodes to none or to a cursor of the right shape, and never throws",
    [Schema.String],
    ([text]) => {
      for (const candidate of [text, Buffer.from(text).toString("base64url")]) {
        const decoded = decodeListCursor(candidate)
        if (Option.isSome(decoded)) expect(Schema.is(Cursor)(decoded.value)).toBe(true)
      }
    }
  )

  it.prop(
    "a tampered cursor is refused or names another position",
    [Cursor, between(0, 10_000), between(1, 63)],
    ([cursor, index, shift]) => {
      const text = encodeListCursor(cursor)
      const at = index % text.length
      const replaced = alphabet[(alphabet.indexOf(text[at] ?? "A") + shift) % 64] ?? "A"
      const decoded = decodeListCursor(text.slice(0, at) + replaced + text.slice(at + 1))
      expect(Option.isNone(decoded) || encodeListCursor(decoded.value) !== text).toBe(true)
    }
  )

  it("refuses what is not base64url of [sort, order, key, uuid]", () => {
    const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
    for (const text of [
      "",
      "%%",
      encode(["amount", "up", null, crypto.randomUUID()]),
      encode(["amount", "asc", 1, crypto.randomUUID()]),
      encode(["amount", "asc", "1", "not-an-id"]),
      encode(["amount", "asc", "1"]),
      encode({ sort: "amount" })
    ]) {
      expect(decodeListCursor(text), text).toEqual(Option.none())
    }
  })
})

const subject = {
  businessObject: "crm/deal",
  fields: {
    title: field.required(field.string),
    stage: field.choice(["open", "won"]),
    amount: field.decimal,
    closeDate: field.date,
    company: field.link("crm/company")
  },
  columns: ["title", "stage", "amount", "closeDate", "company"],
  title: "title"
}
const FieldName = Schema.String.check(Schema.isPattern(/^[A-Za-z_][\w-]{0,20}$/))
const Operator = Schema.Literals(["=", ">=", "<=", ">", "<"])
/** Filters that name declared fields (to reach the SQL), and anything else. */
const FilterText = Schema.Union([
  Schema.Struct({ name: Schema.Literals(Object.keys(subject.fields)), operator: Operator, value: Schema.String }),
  Schema.Struct({ name: Schema.String, operator: Schema.String, value: Schema.String })
])

describe("list plan", () => {
  it.prop("parseFilter(formatFilter(f)) = f", [FieldName, Operator, Schema.String], ([name, operator, value]) => {
    // `a>=1` is "at least 1", never "more than =1": a range's value (a number or a date) never starts with "=".
    if ((operator === ">" || operator === "<") && value.startsWith("=")) return
    const filter = { field: name, operator, value }
    expect(parseFilter(formatFilter(filter))).toEqual(filter)
  })

  it.prop(
    "never throws, and no text of the request reaches the SQL but as a parameter",
    [
      Schema.optional(Schema.Union([Schema.Literals(subject.columns), Schema.String])),
      Schema.Array(FilterText),
      Schema.optional(Schema.String),
      Schema.optional(Cursor)
    ],
    ([sort, filters, q, cursor]) => {
      const filter = filters.map(({ name, operator, value }) => `${name}${operator}${value}`)
      const planned = planList(subject, { sort, filter, q, cursor, limit: 10 })
      if (planned._tag === "Refused") return
      const sql = [...planned.plan.where, planned.plan.orderBy, planned.plan.key].join(" ")
      // Quoted text in the SQL is only a declared field name or fixed text (the search configuration, a time format).
      const fixed = ["'simple'", "''", "'UTC'", "'crm/deal'", `'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'`]
      const allowed = [...Object.keys(subject.fields).map((name) => `'${name}'`), ...fixed]
      for (const quoted of sql.match(/'[^']*'/g) ?? []) expect(allowed).toContain(quoted)
    }
  )

  it.prop("a search is word prefixes of letters and digits, or nothing", [Schema.String], ([q]) => {
    const query = searchQuery(q)
    if (query !== undefined) expect(query).toMatch(/^[\p{L}\p{N}]+:\*( & [\p{L}\p{N}]+:\*)*$/u)
  })
})
