import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, FastCheck as fc } from "effect"
import { hydrateChanges, hydrateMembers } from "../../src/client/hydration"
import { toWireChanges, toWireObject } from "../../src/client/hydration/toWire"
import { applyChanges, diffValues } from "../../src/diff"
import { jsonEquals } from "../../src/api/Json"
import type { Json, JsonObject } from "../../src/api/Json"
import type { Field, Fields } from "../../src/api/Field"
import { groupByRecord } from "../../src/presence/Presence"
import { validateValues } from "../../src/records/RecordValidation"

/**
 * The pure parts that take names from data (diff, apply, validation,
 * presence grouping, hydration), with names drawn from a set that includes
 * Object.prototype's: every object is built with own properties
 * (Object.fromEntries, as JSON.parse does), so "__proto__" is a real key.
 */
const prototypeNames = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"] as const
const names = fc.constantFrom(...prototypeNames, "a", "b")
/** What a plugin may declare: the registry refuses "__proto__" (no wire schema could carry it). */
const declarableNames = fc.constantFrom("constructor", "toString", "hasOwnProperty", "valueOf", "a", "b")

const objectOf = <A>(entries: ReadonlyArray<readonly [string, A]>): { readonly [key: string]: A } =>
  Object.fromEntries(entries)

const uniqueEntries = <A>(key: fc.Arbitrary<string>, value: fc.Arbitrary<A>, maxLength = 4) =>
  fc.uniqueArray(fc.tuple(key, value), { selector: ([name]) => name, maxLength }).map(objectOf)

const fieldsArb = (depth: number): fc.Arbitrary<Fields> => uniqueEntries(declarableNames, fieldArb(depth))

const fieldArb = (depth: number): fc.Arbitrary<Field> =>
  depth === 0
    ? fc.constant<Field>({ kind: "string" })
    : fc.oneof(
        { weight: 3, arbitrary: fc.constant<Field>({ kind: "string" }) },
        { weight: 1, arbitrary: fieldsArb(depth - 1).map((fields): Field => ({ kind: "struct", fields })) },
        { weight: 1, arbitrary: fieldsArb(depth - 1).map((fields): Field => ({ kind: "collection", fields })) }
      )

/** A string that may itself be a prototype name: stored as data. */
const text = fc.oneof(names, fc.constantFrom("", "x"))

const valueArb = (field: Field | undefined): fc.Arbitrary<Json> => {
  if (field === undefined || field.kind === "string") return text
  if (field.kind === "struct") return valuesArb(field.fields)
  if (field.kind !== "collection") return text
  const fields = field.fields
  return fc
    .uniqueArray(fc.tuple(names, valuesArb(fields)), { selector: ([id]) => id, maxLength: 3 })
    .map((entries): Json => entries.map(([id, members]) => ({ ...members, id })))
}

/** Values of `fields`, plus sometimes undeclared members (drift) whose names are prototype names too. */
const valuesArb = (fields: Fields): fc.Arbitrary<JsonObject> =>
  fc
    .tuple(
      fc
        .subarray(Object.entries(fields))
        .chain((declared) =>
          fc.tuple(...declared.map(([name, field]) => valueArb(field).map((value) => [name, value] as const)))
        ),
      uniqueEntries(names, text, 2)
    )
    .map(([declared, drift]) => {
      const entries = new Map<string, Json>(Object.entries(drift).filter(([name]) => !Object.hasOwn(fields, name)))
      for (const [name, value] of declared) entries.set(name, value)
      entries.delete("id")
      return objectOf([...entries])
    })

const schemaAndPair = fieldsArb(2).chain((fields) =>
  fc.tuple(fc.constant(fields), valuesArb(fields), valuesArb(fields))
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
  it("diff and apply: apply(a, diff(a, b)) = b, a diff of equal values is null, and every object stays plain JSON", () =>
    fc.assert(
      fc.property(schemaAndPair, ([fields, before, after]) => {
        const changes = diffValues(fields, before, after)
        expect(plainThroughout(changes)).toBe(true)
        const applied = applyChanges(fields, before, changes)
        expect(plainThroughout(applied)).toBe(true)
        // Equal to `after` as the diff sees values (an empty collection is an absent one).
        expect(diffValues(fields, applied, after)).toBeNull()
        expect(diffValues(fields, before, before)).toBeNull()
        expect(diffValues(fields, {}, {})).toBeNull()
      }),
      { numRuns: 300 }
    ))

  it("validation: accepted exactly when every own key is declared (an own __proto__ is refused), and kept as sent", () =>
    fc.assert(
      fc.property(
        fieldsArb(0).chain((fields) => fc.tuple(fc.constant(fields), uniqueEntries(names, text, 4))),
        ([fields, input]) => {
          const result = Effect.runSync(Effect.either(validateValues("test/names", fields, input)))
          const allDeclared = Object.keys(input).every((name) => Object.hasOwn(fields, name))
          expect(Either.isRight(result)).toBe(allDeclared)
          if (Either.isRight(result)) {
            expect(plainThroughout(result.right)).toBe(true)
            expect(jsonEquals(result.right, input)).toBe(true)
          } else {
            expect(result.left._tag).toBe("BadRequest")
          }
        }
      ),
      { numRuns: 300 }
    ))

  it("presence: editors grouped by record id, whatever the ids, each record its own editors", () =>
    fc.assert(
      fc.property(fc.array(fc.tuple(names, names), { maxLength: 8 }), (pairs) => {
        const live = pairs.map(([recordId, editorId]) => ({ recordId, editorId, name: `user of ${editorId}` }))
        const grouped = groupByRecord(live)
        expect(Object.getPrototypeOf(grouped)).toBe(Object.prototype)
        expect(Object.keys(grouped).sort()).toEqual([...new Set(pairs.map(([recordId]) => recordId))].sort())
        for (const [recordId, editors] of Object.entries(grouped)) {
          expect(editors.map((editor) => editor.id)).toEqual(
            pairs.filter(([id]) => id === recordId).map(([, editorId]) => editorId)
          )
        }
      }),
      { numRuns: 300 }
    ))

  it("hydration: members and diffs hydrate and go back to the same wire form, every object plain", () =>
    fc.assert(
      fc.property(schemaAndPair, ([fields, before, after]) => {
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
      }),
      { numRuns: 300 }
    ))
})
