import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { conflictFields, groupByUnit } from "../../../src/client/react"
import type { ConflictEntry } from "../../../src/client/react"

/** The pure logic of the whole timeline and the conflict view: units of work, and who changed which fields. */

const row = (id: string, correlationId: string, at: string) => ({ id, correlationId, at })

describe("groupByUnit", () => {
  it("puts neighbours of one unit (same correlation id and at) together, in order", () => {
    const rows = [
      row("5", "c3", "t3"),
      row("4", "c2", "t2"),
      row("3", "c2", "t2"),
      row("2", "c2", "t1"),
      row("1", "c1", "t1")
    ]
    expect(groupByUnit(rows).map((unit) => unit.entries.map((entry) => entry.id))).toEqual([
      ["5"],
      ["4", "3"],
      ["2"],
      ["1"]
    ])
    expect(groupByUnit([])).toEqual([])
  })

  const key = Schema.Struct({ correlationId: Schema.Literals(["a", "b", "c"]), at: Schema.Literals(["t1", "t2"]) })
  it.prop(
    "loses and reorders nothing; each unit is one key; neighbouring units differ",
    { keys: Arbitrary.array(Arbitrary.schema(key), { maxLength: 40 }) },
    ({ keys }) => {
      const rows = keys.map((k, index) => ({ ...k, id: String(index) }))
      const units = groupByUnit(rows)
      expect(units.flatMap((unit) => unit.entries)).toEqual(rows)
      for (const unit of units) {
        for (const entry of unit.entries) expect([entry.correlationId, entry.at]).toEqual([unit.correlationId, unit.at])
      }
      units.slice(1).forEach((unit, index) => {
        const before = units[index]
        expect(before !== undefined && before.correlationId === unit.correlationId && before.at === unit.at).toBe(false)
      })
    }
  )
})

const updated = (changes: Record<string, unknown>): ConflictEntry => ({ operation: "updated", changes })

describe("conflictFields", () => {
  it("lists who changed which fields since, and the fields both sides changed", () => {
    const entries = [updated({ amount: 1, stage: 2 }), updated({ title: 3, amount: 4 })]
    const summary = conflictFields(entries, ["title", "closeDate"])
    expect(summary.changes.map((change) => [change.fields, change.overlapping])).toEqual([
      [["amount", "stage"], []],
      [["title", "amount"], ["title"]]
    ])
    expect(summary.changedFields).toEqual(["amount", "stage", "title"])
    expect(summary.overlapping).toEqual(["title"])
    expect(summary.deleted).toBe(false)
  })

  it("a deletion since is said; lifecycle steps change no field", () => {
    const summary = conflictFields(
      [{ operation: "archived" }, { operation: "restored" }, { operation: "deleted", record: { title: "x" } }],
      ["title"]
    )
    expect(summary.changes.map((change) => change.fields)).toEqual([[], [], ["title"]])
    expect(summary.deleted).toBe(true)
    expect(conflictFields([], ["title"])).toEqual({ changes: [], changedFields: [], overlapping: [], deleted: false })
  })

  const names = ["title", "amount", "stage", "company", "lineItems"] as const
  const changes = Schema.Struct(Object.fromEntries(names.map((name) => [name, Schema.optionalKey(Schema.Int)])))
  it.prop(
    "the overlap is exactly the fields changed on both sides",
    {
      entries: Arbitrary.array(Arbitrary.schema(changes).pipe(Arbitrary.map(updated)), { maxLength: 8 }),
      mine: Arbitrary.array(Arbitrary.schema(Schema.Literals(names)), { maxLength: 5 })
    },
    ({ entries, mine }) => {
      const summary = conflictFields(entries, mine)
      const theirs = new Set(entries.flatMap((one) => Object.keys(one.changes ?? {})))
      expect(new Set(summary.changedFields)).toEqual(theirs)
      expect(new Set(summary.overlapping)).toEqual(new Set(mine.filter((field) => theirs.has(field))))
    }
  )
})
