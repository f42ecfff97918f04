import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { withActor } from "../../src/context/Frames"
import { EditableRecords } from "../../src/presence/EditableRecords"
import { Records } from "../../src/records/Records"
import { RecordStore } from "../../src/records/RecordStore"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { freshWorkspace, TestServices } from "../support/TestApp"

const someone = { kind: "user", id: "u-1", name: "Ann", email: "ann@example.com" } as const
const missing = "00000000-0000-4000-8000-000000000000"

/** A company and a deal in `workspace`, the deal archived. */
const recordsIn = (workspace: Workspace) =>
  Effect.gen(function* () {
    const units = yield* UnitOfWork
    const records = yield* Records
    const company = yield* units.run(workspace, records.create("crm/company", { name: "Acme" }))
    const deal = yield* units.run(workspace, records.create("crm/deal", { title: "Big" }))
    yield* units.run(workspace, records.archive("crm/deal", deal.id))
    return { company: company.id, deal: deal.id }
  }).pipe(withActor(someone))

layer(TestServices, { excludeTestServices: true })("record states for presence", (it) => {
  it.effect("lookups of several workspaces and business objects in one call (one statement): each its own list", () =>
    Effect.gen(function* () {
      const [a, b] = [yield* freshWorkspace, yield* freshWorkspace]
      const inA = yield* recordsIn(a)
      const inB = yield* recordsIn(b)
      const store = yield* Effect.provide(RecordStore, RecordStore.layer)

      const found = yield* store.states([
        { workspace: a, businessObject: "crm/company", ids: [inA.company, inB.company, missing, "not-an-id"] },
        { workspace: b, businessObject: "crm/deal", ids: [inB.deal, inB.deal, inA.deal] },
        { workspace: b, businessObject: "crm/company", ids: ["not-an-id"] },
        { workspace: a, businessObject: "crm/deal", ids: [inA.company] }
      ])
      expect(found).toEqual([
        [{ id: inA.company, state: "operational" }],
        [{ id: inB.deal, state: "archived" }],
        [],
        []
      ])
      expect(yield* store.states([])).toEqual([])
    })
  )

  it.effect("checks arriving together from several workspaces: each gets its own answer", () =>
    Effect.gen(function* () {
      const [a, b] = [yield* freshWorkspace, yield* freshWorkspace]
      const inA = yield* recordsIn(a)
      const inB = yield* recordsIn(b)
      const editable = yield* EditableRecords

      const answers = yield* Effect.all(
        [
          editable.require(a, "crm/company", inA.company),
          editable.require(b, "crm/company", inB.company),
          editable.require(a, "crm/deal", inA.deal),
          editable.require(b, "crm/company", inA.company),
          editable.require(a, "crm/company", missing)
        ].map(Effect.exit),
        { concurrency: "unbounded" }
      )
      const tags = answers.map(
        Exit.match({
          onSuccess: () => "ok",
          onFailure: (cause) =>
            Option.match(Cause.findErrorOption(cause), { onNone: () => "died", onSome: (e) => e._tag })
        })
      )
      expect(tags).toEqual(["ok", "ok", "Conflict", "NotFound", "NotFound"])
    })
  )
})
