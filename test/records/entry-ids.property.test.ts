import { describe, expect, it } from "@effect/vitest"
import { Arbitrary } from "effect"
import { field } from "../../src/api/Field"
import type { Fields } from "../../src/api/Field"
import { isJsonArray, isJsonObject } from "../../src/api/Json"
import type { Json, JsonObject } from "../../src/api/Json"
import { assignEntryIds } from "../../src/records/EntryIds"
import { uuidv7 } from "../../src/records/uuidv7"
import { constantFrom, integer, oneOf, option, someKeys } from "../support/arbitraries"

/** Collections at every depth the field model allows: in a record, in a struct, in another collection's entries. */
const fields: Fields = {
  title: field.string,
  lineItems: field.collection({
    product: field.string,
    parts: field.collection({ name: field.string, count: field.number })
  }),
  address: field.struct({ city: field.string, contacts: field.collection({ email: field.string }) })
}

const maybeId = option(constantFrom("a", "b", "c", "given-1", "given-2"), { nil: undefined, freq: 2 })
const withMaybeId = <A extends Record<string, Json>>(members: Arbitrary.Arbitrary<A>) =>
  Arbitrary.map(
    Arbitrary.all([maybeId, members]),
    ([id, rest]): JsonObject => (id === undefined ? rest : { ...rest, id })
  )
const part = withMaybeId(Arbitrary.all({ name: constantFrom("bolt", "nut"), count: integer(0, 9) }))
const lineItem = withMaybeId(
  someKeys(
    Arbitrary.all({ product: constantFrom("Screen", "Stand"), parts: Arbitrary.array(part, { maxLength: 3 }) }),
    ["product", "parts"]
  )
)
const contact = withMaybeId(Arbitrary.all({ email: constantFrom("a@example.com", "b@example.com") }))
const values: Arbitrary.Arbitrary<JsonObject> = someKeys(
  Arbitrary.all({
    title: oneOf<string | null>(Arbitrary.Constant(null), constantFrom("Kiosk", "Deal")),
    lineItems: oneOf<Array<JsonObject> | null>(Arbitrary.Constant(null), Arbitrary.array(lineItem, { maxLength: 4 })),
    address: someKeys(
      Arbitrary.all({ city: Arbitrary.Constant("Oslo"), contacts: Arbitrary.array(contact, { maxLength: 3 }) }),
      ["city", "contacts"]
    )
  }),
  ["title", "lineItems", "address"]
)

/** Every collection entry of `value` under `fields`, at any depth. */
const entriesIn = (fields: Fields, value: JsonObject): Array<JsonObject> =>
  Object.entries(fields).flatMap(([name, declared]) => {
    const member = value[name]
    if (declared.kind === "struct" && isJsonObject(member)) return entriesIn(declared.fields, member)
    if (declared.kind !== "collection" || !isJsonArray(member)) return []
    return member.filter(isJsonObject).flatMap((entry) => [entry, ...entriesIn(declared.fields, entry)])
  })

/** `value` with the ids of entries that had none in `original` removed again. */
const withoutAssigned = (fields: Fields, original: Json, value: Json): Json => {
  if (!isJsonObject(original) || !isJsonObject(value)) return value
  return Object.fromEntries(
    Object.entries(value).map(([name, member]) => {
      const declared = fields[name]
      const before = original[name]
      if (declared?.kind === "struct") return [name, withoutAssigned(declared.fields, before ?? null, member)]
      if (declared?.kind !== "collection" || !isJsonArray(member) || !isJsonArray(before)) return [name, member]
      return [
        name,
        member.map((entry, i) => {
          const old = before[i]
          if (!isJsonObject(entry) || !isJsonObject(old)) return entry
          const { id, ...rest } = withoutAssigned(declared.fields, old, entry) as JsonObject // an entry stays an object
          return "id" in old ? { ...rest, id: id ?? null } : rest
        })
      ]
    })
  )
}

const counter = () => {
  let next = 0
  return () => `new-${++next}`
}

describe("server-assigned collection entry ids", () => {
  it.prop("every entry at every depth has an id afterwards; the ids given are kept", [values], ([input]) => {
    const output = assignEntryIds(fields, input, counter())
    const before = entriesIn(fields, input)
    const after = entriesIn(fields, output)
    expect(after).toHaveLength(before.length)
    after.forEach((entry, i) => {
      expect(typeof entry.id).toBe("string")
      const given = before[i]?.id
      expect(entry.id).toEqual(given === undefined ? expect.stringMatching(/^new-\d+$/) : given)
    })
  })

  it.prop("nothing but the new ids changes, and each new id is used once", [values], ([input]) => {
    const output = assignEntryIds(fields, input, counter())
    expect(withoutAssigned(fields, input, output)).toEqual(input)
    const assigned = entriesIn(fields, output)
      .map((entry) => entry.id)
      .filter((id) => typeof id === "string" && id.startsWith("new-"))
    expect(new Set(assigned).size).toBe(assigned.length)
  })

  it.prop("values whose entries all have ids come back equal", [values], ([input]) => {
    const once = assignEntryIds(fields, input, counter())
    expect(assignEntryIds(fields, once, () => "never used")).toEqual(once)
  })
})

describe("uuidv7", () => {
  const format = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

  it.prop("is a version 7, variant 10 UUID carrying its milliseconds", [integer(0, 2 ** 48 - 1)], ([now]) => {
    const id = uuidv7(now)
    expect(id).toMatch(format)
    expect(Number.parseInt(id.replace(/-/g, "").slice(0, 12), 16)).toBe(now)
  })

  it.prop(
    "an id made in a later millisecond sorts after one made earlier",
    [integer(0, 2 ** 48 - 2), integer(1, 1_000_000)],
    ([earlier, gap]) => {
      const later = Math.min(earlier + gap, 2 ** 48 - 1)
      expect(uuidv7(earlier) < uuidv7(later)).toBe(true)
    }
  )

  it("made at once, ids differ", () => {
    const ids = Array.from({ length: 1000 }, () => uuidv7(1_700_000_000_000))
    expect(new Set(ids).size).toBe(1000)
  })
})
