import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import {
  Decimal,
  hydrateChanges,
  hydrateMembers,
  hydrateTimeline,
  HydrationError,
  isHydratedValueChange,
  PlainDate,
  toWireChanges,
  toWireObject
} from "../../../src/client"
import type { HydratedChanges, HydratedObject, HydratedValue } from "../../../src/client"
import { AuditEntry } from "../../../src/api/AuditEntry"
import { diffValues } from "../../../src/diff"
import type { Json, JsonObject } from "../../../src/api/Json"
import type { Field, Fields } from "../../../src/api/Field"
import { schemaAndPair, schemaAndValues } from "./arbitraries"
import { withField } from "./fixtures"

const at = { businessObject: "test/thing", path: "" }
const runs = { arbitrary: { runs: 300 } }
const nat = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const isObject = (value: unknown): value is { readonly [key: string]: unknown } =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  Object.getPrototypeOf(value) === Object.prototype

/** Every declared member holds its kind's hydrated type: Decimal, PlainDate, Date; structs and entries recursively. */
const conforms = (fields: Fields, values: HydratedObject): boolean =>
  Object.entries(values).every(([name, value]) => {
    const field = Object.hasOwn(fields, name) ? fields[name] : undefined
    return field === undefined || conformsTo(field, value)
  })

const conformsTo = (field: Field, value: HydratedValue): boolean => {
  if (value === null) return true
  switch (field.kind) {
    case "decimal":
      return value instanceof Decimal
    case "date":
      return value instanceof PlainDate
    case "datetime":
      return value instanceof Date
    case "string":
    case "choice":
    case "link":
      return typeof value === "string"
    case "number":
      return typeof value === "number"
    case "boolean":
      return typeof value === "boolean"
    case "struct":
      return isObject(value) && conforms(field.fields, value as HydratedObject)
    case "collection":
      return (
        Array.isArray(value) &&
        value.every(
          (entry) => isObject(entry) && typeof entry.id === "string" && conforms(field.fields, entry as HydratedObject)
        )
      )
  }
}

const changesConform = (fields: Fields, changes: HydratedChanges): boolean =>
  Object.entries(changes).every(([name, change]) => {
    const field = Object.hasOwn(fields, name) ? fields[name] : undefined
    if (field === undefined) return true
    if (isHydratedValueChange(change)) return conformsTo(field, change.from) && conformsTo(field, change.to)
    if (field.kind !== "collection") return false
    return (
      (change.added ?? []).every((entry) => conforms(field.fields, entry.values)) &&
      (change.modified ?? []).every((entry) => changesConform(field.fields, entry.changes))
    )
  })

const deepFreeze = <A>(value: A): A => {
  if (typeof value === "object" && value !== null) {
    for (const member of Object.values(value)) deepFreeze(member)
    Object.freeze(value)
  }
  return value
}

const entryOf = (businessObject: string, parts: { record?: JsonObject; changes?: unknown }): AuditEntry =>
  new AuditEntry({
    id: "row",
    at: "2026-03-01T09:30:00.123456Z",
    actor: { kind: "system", name: "seeder:test" },
    correlationId: "c",
    businessObject,
    businessObjectId: "r",
    operation: parts.record === undefined ? "updated" : "created",
    cause: null,
    ...(parts.record === undefined ? {} : { record: parts.record }),
    ...(parts.changes === undefined ? {} : { changes: parts.changes as NonNullable<AuditEntry["changes"]> })
  })

describe("hydration properties (random schemas, values written against them, diffs made by the server's diffValues)", () => {
  it.prop(
    "a record hydrates to its kinds' types, and toWire gives back the very wire values",
    [schemaAndValues],
    ([{ fields, values }]) => {
      const hydrated = hydrateMembers(at, fields, values)
      expect(conforms(fields, hydrated)).toBe(true)
      expect(toWireObject(hydrated)).toEqual(values)
    },
    runs
  )

  it.prop(
    "a diff hydrates on both sides, in added values and nested modified changes, and toWire gives it back",
    [schemaAndPair.pipe(Arbitrary.filter(({ fields, before, after }) => diffValues(fields, before, after) !== null))],
    ([{ fields, before, after }]) => {
      const changes = diffValues(fields, before, after)
      if (changes === null) return
      const hydrated = hydrateChanges(at, fields, changes)
      expect(changesConform(fields, hydrated)).toBe(true)
      expect(toWireChanges(hydrated)).toEqual(changes)
    },
    runs
  )

  it.prop(
    "hydration is pure: deep-frozen input, unchanged afterwards, same result twice",
    [schemaAndPair],
    ([{ fields, before, after }]) => {
      const changes = diffValues(fields, before, after)
      const snapshot = structuredClone({ before, changes })
      deepFreeze(before)
      deepFreeze(changes)
      const once = hydrateMembers(at, fields, before)
      expect(hydrateMembers(at, fields, before)).toEqual(once)
      if (changes !== null) expect(hydrateChanges(at, fields, changes)).toEqual(hydrateChanges(at, fields, changes))
      expect({ before, changes }).toEqual(snapshot)
    },
    runs
  )

  it.prop(
    "an unknown business object: every row comes back as it was, the same object",
    [schemaAndPair],
    ([{ fields, before, after }]) => {
      const changes = diffValues(fields, before, after)
      const rows = [
        entryOf("gone/thing", { record: before }),
        ...(changes === null ? [] : [entryOf("gone/thing", { changes })])
      ]
      const hydrated = hydrateTimeline([{ name: "test/thing", fields }], rows)
      hydrated.forEach((entry, i) => {
        expect(entry).toBe(rows[i])
      })
    },
    runs
  )

  it.prop(
    "a removed field passes through untouched (same value); every other field hydrates as before",
    [schemaAndPair.pipe(Arbitrary.filter(({ fields }) => Object.keys(fields).length > 0)), nat],
    ([{ fields, before, after }, pick]) => {
      const names = Object.keys(fields)
      const removed = names[pick % names.length] ?? ""
      const reduced = withField(fields, removed, undefined)
      const full = hydrateMembers(at, fields, before)
      const partial = hydrateMembers(at, reduced, before)
      expect(partial[removed]).toBe(before[removed])
      expect(withoutKey(partial, removed)).toEqual(withoutKey(full, removed))

      const changes = diffValues(fields, before, after)
      if (changes === null) return
      const fullChanges = hydrateChanges(at, fields, changes)
      const partialChanges = hydrateChanges(at, reduced, changes)
      expect(partialChanges[removed]).toBe(changes[removed])
      expect(withoutKey(partialChanges, removed)).toEqual(withoutKey(fullChanges, removed))
    },
    runs
  )

  it.prop(
    "a field whose kind changed so that its value no longer fits: HydrationError naming it and its new kind",
    [schemaAndValues.pipe(Arbitrary.filter(({ fields, values }) => presentIn(fields, values).length > 0)), nat],
    ([{ fields, values }, pick]) => {
      const present = presentIn(fields, values)
      const name = present[pick % present.length] ?? ""
      const value = values[name] ?? null
      const kind = misfit(value, pick)
      let error: unknown
      try {
        hydrateMembers(at, withField(fields, name, kind), values)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(HydrationError)
      expect(error).toMatchObject({ businessObject: "test/thing", fieldPath: name, expectedKind: kind.kind })
    },
    runs
  )
})

/** The declared fields `values` holds a value of (not absent, not null). */
const presentIn = (fields: Fields, values: JsonObject) =>
  Object.keys(fields).filter((name) => values[name] !== undefined && values[name] !== null)

const withoutKey = <A extends object>(object: A, key: string): Partial<A> => {
  const { [key as keyof A]: _dropped, ...rest } = object
  return rest as Partial<A>
}

/** A field kind the wire value cannot fit. */
const misfit = (value: Json, pick: number): Field => {
  const candidates: ReadonlyArray<Field> =
    typeof value === "string"
      ? [{ kind: "number" }, { kind: "boolean" }, { kind: "struct", fields: {} }, { kind: "collection", fields: {} }]
      : typeof value === "number"
        ? [
            { kind: "string" },
            { kind: "choice", options: ["1", "2"] },
            { kind: "link", target: "test/other" },
            { kind: "decimal" },
            { kind: "date" },
            { kind: "datetime" },
            { kind: "boolean" },
            { kind: "struct", fields: {} }
          ]
        : typeof value === "boolean"
          ? [{ kind: "string" }, { kind: "number" }, { kind: "decimal" }, { kind: "collection", fields: {} }]
          : Array.isArray(value)
            ? [{ kind: "string" }, { kind: "decimal" }, { kind: "struct", fields: {} }]
            : [{ kind: "number" }, { kind: "date" }, { kind: "collection", fields: {} }]
  return candidates[pick % candidates.length] ?? { kind: "boolean" }
}
