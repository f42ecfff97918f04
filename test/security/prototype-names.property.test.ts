import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Result } from "effect"
import { hydrateChanges, hydrateMembers } from "../../src/client/hydration"
import { toWireChanges, toWireObject } from "../../src/client/hydration/toWire"
import { applyChanges, diffValues } from "../../src/diff"
import { jsonEquals } from "../../src/api/Json"
import type { Json, JsonObject } from "../../src/api/Json"
import { field } from "../../src/api/Field"
import type { Field, Fields } from "../../src/api/Field"
import { groupByRecord } from "../../src/presence/Presence"
import { validateValues } from "../../src/records/RecordValidation"
import type { Arb } from "../support/arbitraries"
import { boolean, constantFrom, weighted } from "../support/arbitraries"

/**
 * The pure parts that take names from data (diff, apply, validation,
 * presence grouping, hydration), with names drawn from a set that includes
 * Object.prototype's: every object is built with own properties
 * (Object.fromEntries, as JSON.parse does), so "__proto__" is a real key.
 */
const prototypeNames = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"] as const
const names = constantFrom<string>(...prototypeNames, "a", "b")
/** What a plugin may declare: the registry refuses "__proto__" (no wire schema could carry it). */
const declarableNames = constantFrom<string>("constructor", "toString", "hasOwnProperty", "valueOf", "a", "b")

const objectOf = <A>(entries: ReadonlyArray<readonly [string, A]>): { readonly [key: string]: A } =>
  Object.fromEntries(entries)

/** Up to `maxLength` entries, each name once (the first drawn wins). */
const uniqueEntries = <A>(key: Arb<string>, value: Arb<A>, maxLength = 4) =>
  Arbitrary.map(Arbitrary.array(Arbitrary.all([key, value]), { maxLength }), (entries) =>
    objectOf([...new Map([...entries].reverse()).entries()].reverse())
  )

/** Some of `items`, in their order. */
const subarray = <A>(items: ReadonlyArray<A>): Arb<ReadonlyArray<A>> =>
  Arbitrary.map(Arbitrary.all(items.map(() => boolean)), (kept) => items.filter((_, index) => kept[index]))

const fieldsArb = (depth: number): Arb<Fields> => uniqueEntries(declarableNames, fieldArb(depth))

const fieldArb = (depth: number): Arb<Field> =>
  depth === 0
    ? Arbitrary.Constant<Field>({ kind: "string" })
    : weighted<Field>(
        { weight: 3, arbitrary: Arbitrary.Constant({ kind: "string" }) },
        { weight: 1, arbitrary: Arbitrary.map(fieldsArb(depth - 1), (fields): Field => ({ kind: "struct", fields })) },
        {
          weight: 1,
          arbitrary: Arbitrary.map(fieldsArb(depth - 1), (fields): Field => ({ kind: "collection", fields }))
        }
      )

/** A string that may itself be a prototype name: stored as data. */
const text = weighted<string>({ weight: 1, arbitrary: names }, { weight: 1, arbitrary: constantFrom("", "x") })

const valueArb = (field: Field | undefined): Arb<Json> => {
  if (field === undefined || field.kind === "string") return text
  if (field.kind === "struct") return valuesArb(field.fields)
  if (field.kind !== "collection") return text
  const fields = field.fields
  // Entries with ids unique within the collection (the first drawn wins).
  return Arbitrary.map(
    Arbitrary.array(Arbitrary.all([names, valuesArb(fields)]), { maxLength: 3 }),
    (entries): Json =>
      [...new Map([...entries].reverse()).entries()].reverse().map(([id, members]) => ({ ...members, id }))
  )
}

/** Values of `fields`, plus sometimes undeclared members (drift) whose names are prototype names too. */
const valuesArb = (fields: Fields): Arb<JsonObject> =>
  Arbitrary.map(
    Arbitrary.all([
      Arbitrary.flatMap(subarray(Object.entries(fields)), (declared) =>
        Arbitrary.all(
          declared.map(([name, field]) => Arbitrary.map(valueArb(field), (value) => [name, value] as const))
        )
      ),
      uniqueEntries(names, text, 2)
    ]),
    ([declared, drift]) => {
      const entries = new Map<string, Json>(Object.entries(drift).filter(([name]) => !Object.hasOwn(fields, name)))
      for (const [name, value] of declared) entries.set(name, value)
      entries.delete("id")
      return objectOf([...entries])
    }
  )

const schemaAndPair = Arbitrary.flatMap(fieldsArb(2), (fields) =>
  Arbitrary.all([Arbitrary.Constant(fields), valuesArb(fields), valuesArb(fields)])
)

/** Every object at every depth is a plain one (nothing replaced a prototype), and no function (a prototype member) was taken for a value. */
const plainThroughout = (value: unknown): boolean => {
  if (Array.isArray(value)) return value.every(plainThroughout)
  if (typeof value === "function") return false
  if (typeof value !== "object" || value === null) return true
  return Object.getPrototypeOf(value) === Object.prototype && Object.values(value).every(plainThroughout)
}

/** JSON with object keys sorted: member order is not what is checked here. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, member: unknown) =>
    typeof member === "object" && member !== null && !Array.isArray(member)
      ? Object.fromEntries(Object.entries(member).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : member
  )

const at = { businessObject: "test/names", path: "" }

describe("names from data that are Object.prototype's (property)", () => {
  it.prop(
    "diff and apply: apply(a, diff(a, b)) = b, a diff of equal values is null, and every object stays plain JSON",
    { case: schemaAndPair },
    ({ case: [fields, before, after] }) => {
      const changes = diffValues(fields, before, after)
      expect(plainThroughout(changes)).toBe(true)
      const applied = applyChanges(fields, before, changes)
      expect(plainThroughout(applied)).toBe(true)
      // Equal to `after` as the diff sees values (an empty collection is an absent one).
      expect(diffValues(fields, applied, after)).toBeNull()
      expect(diffValues(fields, before, before)).toBeNull()
      expect(diffValues(fields, {}, {})).toBeNull()
    },
    { arbitrary: { runs: 300 } }
  )

  it.prop(
    "validation: accepted exactly when every own key is declared (an own __proto__ is refused), and kept as sent",
    {
      case: Arbitrary.flatMap(fieldsArb(0), (fields) =>
        Arbitrary.all([Arbitrary.Constant(fields), uniqueEntries(names, text, 4)])
      )
    },
    ({ case: [fields, input] }) => {
      const result = Effect.runSync(Effect.result(validateValues("test/names", fields, input)))
      const allDeclared = Object.keys(input).every((name) => Object.hasOwn(fields, name))
      expect(Result.isSuccess(result)).toBe(allDeclared)
      if (Result.isSuccess(result)) {
        expect(plainThroughout(result.success)).toBe(true)
        expect(jsonEquals(result.success, input)).toBe(true)
      } else {
        expect(result.failure._tag).toBe("BadRequest")
      }
    },
    { arbitrary: { runs: 300 } }
  )

  it("validation: a declared field named like a prototype member may be left out at every depth", () => {
    const fields: Fields = {
      constructor: field.string,
      valueOf: field.struct({ toString: field.number, hasOwnProperty: field.collection({ valueOf: field.boolean }) }),
      toString: field.collection({ constructor: field.struct({ valueOf: field.string }) })
    }
    const validate = (input: JsonObject) => Effect.runSync(Effect.result(validateValues("test/names", fields, input)))
    const inputs: ReadonlyArray<JsonObject> = [
      {},
      { valueOf: {} },
      { valueOf: { hasOwnProperty: [{}, { id: "e2", valueOf: true }] } },
      { toString: [{ id: "e1" }, { constructor: {} }, { constructor: { valueOf: "kept" } }] }
    ]
    for (const input of inputs) {
      const result = validate(input)
      expect(Result.isSuccess(result), JSON.stringify(input)).toBe(true)
      if (Result.isSuccess(result)) {
        expect(plainThroughout(result.success)).toBe(true)
        expect(jsonEquals(result.success, input)).toBe(true)
      }
    }
    const wrong = validate({ valueOf: { toString: "12" }, toString: [{ constructor: { valueOf: 1 } }] })
    expect(Result.isFailure(wrong) && wrong.failure.message).toBe(
      'invalid values for test/names: valueOf.toString: Expected number, actual "12"; toString.0.constructor.valueOf: Expected string, actual 1'
    )
  })

  it.prop(
    "presence: editors grouped by record id, whatever the ids, each record its own editors",
    { pairs: Arbitrary.array(Arbitrary.all([names, names]), { maxLength: 8 }) },
    ({ pairs }) => {
      const live = pairs.map(([recordId, editorId]) => ({
        recordId,
        editorId,
        userId: `user-${editorId}`,
        name: `user of ${editorId}`
      }))
      const grouped = groupByRecord(live)
      expect(Object.getPrototypeOf(grouped)).toBe(Object.prototype)
      expect(Object.keys(grouped).sort()).toEqual([...new Set(pairs.map(([recordId]) => recordId))].sort())
      for (const [recordId, editors] of Object.entries(grouped)) {
        expect(editors.map((editor) => editor.id)).toEqual(
          pairs.filter(([id]) => id === recordId).map(([, editorId]) => editorId)
        )
      }
    },
    { arbitrary: { runs: 300 } }
  )

  it.prop(
    "hydration: members and diffs hydrate and go back to the same wire form, every object plain",
    { case: schemaAndPair },
    ({ case: [fields, before, after] }) => {
      const hydrated = hydrateMembers(at, fields, before)
      const wire = toWireObject(hydrated)
      expect(plainThroughout(wire)).toBe(true)
      expect(jsonEquals(wire, before)).toBe(true)
      expect(Object.keys(wire)).toEqual(Object.keys(before))
      const changes = diffValues(fields, before, after)
      if (changes === null) return
      const back = toWireChanges(hydrateChanges(at, fields, changes))
      expect(plainThroughout(back)).toBe(true)
      expect(canonical(back)).toBe(canonical(changes))
    },
    { arbitrary: { runs: 300 } }
  )
})
