import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import type { Fields } from "../../src/api/Field"
import { compactObject, isJsonArray, isJsonObject } from "../../src/api/Json"
import type { Json, RecordValues } from "../../src/api/Json"
import { own } from "../../src/api/own"
import { replay, restorePatch, undoPlan } from "../../src/audit/replay"
import type { HistoryRow, ReplayedState } from "../../src/audit/replay"
import { diffValues } from "../../src/diff"
import { crm } from "../../src/plugins/crm"
import { mergeValues } from "../../src/records/RecordValidation"

/**
 * Rebuilding a record from its timeline (docs/history.md), as pure functions
 * over random histories of crm/deal records: the record rebuilt as of every
 * entry is the value it had right after that write; a restore to an entry,
 * then rebuilt, is the state as of that entry; an undo takes back exactly
 * the entry's fields.
 */

const fields: Fields = crm.businessObjects.deal?.fields ?? {}

const between = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

/** A value or null (null, like an absent key, is no value once compacted). */
const absentOr = <S extends Schema.Top>(schema: S) => Schema.NullOr(schema)

const lineItem = Schema.Struct({
  id: Schema.Literals(["l1", "l2", "l3", "l4"]),
  product: absentOr(Schema.Literals(["Screen", "Stand"])),
  quantity: absentOr(between(0, 3)),
  price: absentOr(Schema.Literals(["1.00", "2.50"]))
})

/** Up to four entries with distinct ids, in any order. */
const lineItems = Arbitrary.array(Arbitrary.schema(lineItem), { maxLength: 4 }).pipe(
  Arbitrary.map((entries) => entries.filter((entry, i) => entries.findIndex((other) => other.id === entry.id) === i))
)

/** crm/deal values over small domains (so fields often stay unchanged); `legacy` is a field no longer declared. */
const dealValues = (withLegacy: boolean): Arbitrary.Arbitrary<RecordValues> =>
  Arbitrary.all({
    values: Arbitrary.schema(
      Schema.Struct({
        title: absentOr(Schema.Literals(["Kiosk", "Kiosk rollout", "Pilot"])),
        stage: absentOr(Schema.Literals(["open", "won", "lost"])),
        amount: absentOr(Schema.Literals(["100.00", "250.00", "9.99"])),
        closeDate: absentOr(Schema.Literals(["2026-12-15", "2027-01-31"])),
        address: absentOr(
          Schema.Struct({ city: absentOr(Schema.Literals(["Lyon", "Paris"])), country: Schema.Literal("FR") })
        ),
        legacy: withLegacy ? absentOr(Schema.Literals(["x", "y"])) : Schema.Null
      })
    ),
    collection: Arbitrary.schema(Schema.Boolean).pipe(
      Arbitrary.flatMap((present) => (present ? lineItems : Arbitrary.Constant(null)))
    )
  }).pipe(Arbitrary.map(({ values, collection }) => compactObject({ ...values, lineItems: collection })))

type Step = { readonly kind: "write"; readonly values: RecordValues } | { readonly kind: "archive" | "restore" }

const steps = (withLegacy: boolean) => {
  const write = dealValues(withLegacy).pipe(Arbitrary.map((values): Step => ({ kind: "write", values })))
  const lifecycle = Arbitrary.schema(Schema.Literals(["archive", "restore"])).pipe(
    Arbitrary.map((kind): Step => ({ kind }))
  )
  // Five writes to one archive or restore.
  const step = Arbitrary.schema(between(0, 5)).pipe(Arbitrary.flatMap((n) => (n === 0 ? lifecycle : write)))
  return Arbitrary.array(step, { minLength: 1, maxLength: 12 })
}

const natural = between(0, 2_147_483_647)

const actor = { kind: "user", id: "u1", name: "Ada", email: "ada@example.com" } as const

/** What the service keeps of a record's history: its rows, and its state right after each of them. */
interface Written {
  readonly rows: ReadonlyArray<HistoryRow>
  readonly after: ReadonlyArray<{ readonly state: "operational" | "archived"; readonly values: RecordValues }>
}

/**
 * Writes a record as the service does: created with the first values, then
 * each step (a write whose merge changes nothing leaves no row, as does an
 * archive of an archived record).
 */
const write = (first: RecordValues, history: ReadonlyArray<Step>): Written => {
  let values = mergeValues({}, first)
  let state: "operational" | "archived" = "operational"
  const rows: Array<HistoryRow> = [row(0, "created", { record: values })]
  const after: Array<Written["after"][number]> = [{ state, values }]
  for (const step of history) {
    if (step.kind === "write") {
      const next = mergeValues(values, step.values)
      const changes = diffValues(fields, values, next)
      if (changes === null || state === "archived") continue
      rows.push(row(rows.length, "updated", { changes }))
      values = next
    } else {
      const target = step.kind === "archive" ? "archived" : "operational"
      if (target === state) continue
      rows.push(row(rows.length, step.kind === "archive" ? "archived" : "restored", {}))
      state = target
    }
    after.push({ state, values })
  }
  return { rows, after }
}

const row = (index: number, operation: HistoryRow["operation"], body: Partial<HistoryRow>): HistoryRow => ({
  id: `e${index}`,
  at: `2026-11-23T20:00:${String(index).padStart(2, "0")}.000000Z`,
  actor,
  operation,
  recordVersion: index + 1,
  ...body
})

/**
 * A record's values as a comparison sees them: collection entries by id (a
 * reorder is no change, and not kept), an empty collection as none (the diff
 * does not tell them apart).
 */
const canonical = (values: RecordValues): Json =>
  Object.fromEntries(
    Object.entries(compactObject(values)).flatMap(([name, value]) =>
      own(fields, name)?.kind === "collection" && isJsonArray(value) && value.length === 0
        ? []
        : [[name, canonicalValue(name, value)]]
    )
  )
const canonicalValue = (name: string, value: Json): Json =>
  own(fields, name)?.kind === "collection" && isJsonArray(value)
    ? [...value].sort((a, b) => idOf(a).localeCompare(idOf(b)))
    : value
const idOf = (entry: Json) => (isJsonObject(entry) && typeof entry.id === "string" ? entry.id : "")

const stateOf = (replayed: ReplayedState | undefined) =>
  replayed === undefined ? undefined : { state: replayed.state, values: canonical(replayed.values) }

describe("rebuilding a record from its timeline", () => {
  it.prop(
    "the record rebuilt as of every entry is the value it had right after that write",
    [dealValues(true), steps(true)],
    ([first, history]) => {
      const { rows, after } = write(first, history)
      rows.forEach((entry, i) => {
        const rebuilt = replay(fields, rows.slice(0, i + 1))
        expect(rebuilt?.entry).toBe(entry)
        expect(stateOf(rebuilt)).toEqual({ state: after[i]?.state, values: canonical(after[i]?.values ?? {}) })
      })
      expect(replay(fields, [])).toBeUndefined()
    },
    { arbitrary: { runs: 300 } }
  )

  it.prop(
    "a deleted record rebuilds as deleted with its final snapshot; the rows before it as before",
    [dealValues(true), steps(true)],
    ([first, history]) => {
      const { rows, after } = write(first, history)
      const last = after[after.length - 1]
      const deleted = [...rows, row(rows.length, "deleted", { record: last?.values ?? {} })]
      expect(stateOf(replay(fields, deleted))).toEqual({ state: "deleted", values: canonical(last?.values ?? {}) })
    },
    { arbitrary: { runs: 100 } }
  )

  it.prop(
    "restore to an entry, then rebuild: the values as of that entry",
    [dealValues(false), steps(false), natural],
    ([first, history, pick]) => {
      const { rows, after } = write(first, history)
      const current = after[after.length - 1]?.values ?? {}
      const k = pick % rows.length
      const target = replay(fields, rows.slice(0, k + 1))?.values ?? {}
      const restored = mergeValues(current, restorePatch(fields, target))
      const changes = diffValues(fields, current, restored)
      const withRevert = changes === null ? rows : [...rows, row(rows.length, "updated", { changes })]
      expect(canonical(replay(fields, withRevert)?.values ?? {})).toEqual(canonical(after[k]?.values ?? {}))
    },
    { arbitrary: { runs: 300 } }
  )

  it.prop(
    "undo of an update: its fields back to before it, the others as they are; refused fields are changed later",
    [dealValues(false), steps(false), natural],
    ([first, history, pick]) => {
      const { rows, after } = write(first, history)
      const updates = rows.flatMap((entry, i) => (entry.operation === "updated" ? [i] : []))
      const k = updates[pick % Math.max(updates.length, 1)]
      if (k === undefined) return
      const plan = undoPlan(fields, rows, `e${k}`)
      if (plan._tag !== "Plan") throw new Error(`expected a plan, got ${plan._tag}`)
      const touched = Object.keys(rows[k]?.changes ?? {})
      expect([...plan.fields].sort()).toEqual([...touched].sort())
      const later = rows.slice(k + 1).flatMap((entry) => Object.keys(entry.changes ?? {}))
      expect(plan.changedSince).toEqual(plan.fields.filter((name) => later.includes(name)))

      const current = after[after.length - 1]?.values ?? {}
      const before = after[k - 1]?.values ?? {}
      const undone = canonical(mergeValues(current, plan.patch))
      const expected = canonical(
        mergeValues(current, Object.fromEntries(touched.map((name) => [name, own(before, name) ?? null])))
      )
      expect(undone).toEqual(expected)
      // Undoing the newest update: the record as it was just before it.
      if (k === rows.length - 1) expect(undone).toEqual(canonical(before))
    },
    { arbitrary: { runs: 300 } }
  )

  it("undo names a missing entry and refuses entries that are not updates", () => {
    const { rows } = write({ title: "Kiosk" }, [{ kind: "archive" }])
    expect(undoPlan(fields, rows, "nope")).toEqual({ _tag: "NoSuchEntry" })
    expect(undoPlan(fields, rows, "e0")).toEqual({ _tag: "NotAnUpdate", operation: "created" })
    expect(undoPlan(fields, rows, "e1")).toEqual({ _tag: "NotAnUpdate", operation: "archived" })
  })
})
