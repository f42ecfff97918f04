import { subscribeQueue } from "../support/hintQueue"
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Predicate, Queue } from "effect"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { withActor } from "../../src/context/Frames"
import { Records } from "../../src/records/Records"
import type { Workspace } from "../../src/api/Workspace"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { baseUrl, freshWorkspace, testApp } from "../support/TestApp"
import { createRecord, recordsOf, signedInMember, timelineOf } from "../support/api"
import { refusal } from "../support/apiCaller"
import { TestPlugins } from "../support/testPlugin"

/** Everything a unit could have written in a workspace: records and audit rows. */
const countRows = (workspace: Workspace) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [records] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(workspace.table("records"))}`
    const [audit] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(workspace.table("audit_entries"))}`
    return { records: records?.n ?? -1, audit: audit?.n ?? -1 }
  }).pipe(Effect.orDie)

const someone = { kind: "user", id: "u-1", name: "Ann", email: "ann@example.com" } as const

layer(testApp({}, TestPlugins), { excludeTestServices: true })("a unit of work is all or nothing", (it) => {
  it.effect("a listener failing after writes rolls back the record, the listener's writes and every audit row", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      yield* createRecord(client, "test/widget", { name: "fine" })
      const before = yield* countRows(workspace)
      expect(before).toEqual({ records: 1, audit: 1 })

      const refused = yield* refusal(recordsOf(client, "test/widget").create({ name: "bad", fail: true }))
      expect(refused.status).toBe(409)
      expect(refused.body).toEqual({
        _tag: "Conflict",
        message: "widget refused by its listener",
        requestId: expect.any(String)
      })
      expect(yield* countRows(workspace)).toEqual(before)
      const activities = (yield* recordsOf(client, "crm/activity").list()).body
      expect(activities.records).toEqual([])
    })
  )

  it.effect("staging without an actor fails the whole unit: no record change, no row, no broadcast", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const units = yield* UnitOfWork
      const records = yield* Records
      const hints = yield* subscribeQueue(yield* BroadcastBus, workspace.id)

      const orphan = yield* units
        .run(
          workspace,
          Effect.gen(function* () {
            // A draft stages nothing, so it gets written before the fault.
            yield* records.create("crm/company", { name: "Draft first" }, { draft: true })
            yield* records.create("crm/company", { name: "No actor" })
          })
        )
        .pipe(Effect.exit)
      expect(Exit.isFailure(orphan)).toBe(true)
      // A write path without an actor is a bug, not the caller's to handle: the unit dies with it.
      const defects = Exit.isFailure(orphan)
        ? orphan.cause.reasons.filter(Cause.isDieReason).map((reason) => reason.defect)
        : []
      expect(defects.map((defect) => Predicate.isTagged(defect, "MissingActor"))).toEqual([true])
      expect(yield* countRows(workspace)).toEqual({ records: 0, audit: 0 })

      // The next unit's hint is the first one to arrive: the failed unit published nothing.
      const written = yield* units
        .run(workspace, records.create("crm/company", { name: "With actor" }))
        .pipe(withActor(someone))
      const first = yield* Queue.take(hints).pipe(Effect.timeout("5 seconds"))
      expect(first.data.businessObjectId).toBe(written.id)
      expect(yield* countRows(workspace)).toEqual({ records: 1, audit: 1 })
    })
  )

  it.effect("a unit started inside another on the same workspace joins it: one correlation id, one outcome", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const units = yield* UnitOfWork
      const records = yield* Records
      const sql = yield* SqlClient.SqlClient
      const outer = Effect.andThen(
        records.create("crm/company", { name: "Outer" }),
        units.run(workspace, records.create("crm/company", { name: "Inner" }))
      )
      yield* units.run(workspace, outer).pipe(withActor(someone))
      const [audit] = yield* sql<{ rows: number; units: number }>`SELECT count(*)::int AS rows,
          count(DISTINCT correlation_id)::int AS units FROM ${sql(workspace.table("audit_entries"))}`
      expect(audit).toEqual({ rows: 2, units: 1 })

      const failing = Effect.andThen(
        units.run(workspace, records.create("crm/company", { name: "Inner, then the outer fails" })),
        Effect.fail("the outer unit fails")
      )
      const failed = yield* units.run(workspace, failing).pipe(withActor(someone), Effect.exit)
      expect(Exit.isFailure(failed)).toBe(true)
      expect(yield* countRows(workspace)).toEqual({ records: 2, audit: 2 })
    })
  )

  it.effect("a unit never spans two workspaces: joining one on another workspace fails and rolls back", () =>
    Effect.gen(function* () {
      const first = yield* freshWorkspace
      const second = yield* freshWorkspace
      const units = yield* UnitOfWork
      const records = yield* Records
      const crossing = yield* units
        .run(
          first,
          Effect.gen(function* () {
            yield* records.create("crm/company", { name: "In the first" })
            yield* units.run(second, records.create("crm/company", { name: "In the second?" }))
          })
        )
        .pipe(withActor(someone), Effect.exit)
      expect(Exit.isFailure(crossing) && Cause.hasDies(crossing.cause)).toBe(true)
      expect(yield* countRows(first)).toEqual({ records: 0, audit: 0 })
      expect(yield* countRows(second)).toEqual({ records: 0, audit: 0 })
    })
  )

  it.effect("a constraint violation at the end of a cascade rolls back A and B too", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const sql = yield* SqlClient.SqlClient
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      yield* sql`ALTER TABLE ${sql(workspace.table("records"))} ADD CONSTRAINT no_boom_activity
        CHECK (business_object <> 'crm/activity' OR values->>'subject' NOT LIKE 'Boom%')`
      const company = yield* createRecord(client, "crm/company", { name: "Boom Inc", wonDeals: 0 })
      const deal = yield* createRecord(client, "crm/deal", { title: "Fuse", stage: "open", company: company.id })
      const before = yield* countRows(workspace)

      const closing = yield* refusal(recordsOf(client, "crm/deal").action("close", deal.id))
      expect(closing.status).toBe(500)
      expect(closing.body).toEqual({ _tag: "InternalError", message: "internal error", requestId: expect.any(String) })
      expect(yield* countRows(workspace)).toEqual(before)
      const dealNow = (yield* recordsOf(client, "crm/deal").get(deal.id)).body
      expect(dealNow.values.stage).toBe("open")
      const companyNow = (yield* recordsOf(client, "crm/company").get(company.id)).body
      expect(companyNow.values.wonDeals).toBe(0)
      expect((yield* timelineOf(client, "crm/deal", deal.id)).entries.map((e) => e.operation)).toEqual(["created"])
    })
  )

  it.effect("a unit's rows are written by one INSERT, in staging order, with one transaction timestamp", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const sql = yield* SqlClient.SqlClient
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const spawner = yield* createRecord(client, "test/widget", { name: "spawner", count: 25 })
      yield* sql`CREATE TABLE ${sql(workspace.table("insert_statements"))} (n int NOT NULL)`
      yield* sql.unsafe(`CREATE FUNCTION ${workspace.schema}.count_insert() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN INSERT INTO ${workspace.schema}.insert_statements VALUES (1); RETURN NULL; END $$`)
      yield* sql.unsafe(`CREATE TRIGGER count_insert AFTER INSERT ON ${workspace.schema}.audit_entries
        FOR EACH STATEMENT EXECUTE FUNCTION ${workspace.schema}.count_insert()`)

      yield* recordsOf(client, "test/widget").action("spawn", spawner.id)
      const [statements] = yield* sql<{
        n: number
      }>`SELECT count(*)::int AS n FROM ${sql(workspace.table("insert_statements"))}`
      expect(statements?.n).toBe(1)
      const rows = yield* sql<{ at: string; name: string; cause: unknown }>`
        SELECT at::text AS at, record->>'name' AS name, cause FROM ${sql(workspace.table("audit_entries"))}
        WHERE business_object_id <> ${spawner.id} ORDER BY seq`
      expect(rows).toHaveLength(25)
      expect(rows.map((row) => row.name)).toEqual(Array.from({ length: 25 }, (_, i) => `spawned ${i}`))
      expect(new Set(rows.map((row) => row.at)).size).toBe(1)
      for (const row of rows) expect(row.cause).toEqual({ kind: "action", action: "test/widget/spawn" })
    })
  )
})
