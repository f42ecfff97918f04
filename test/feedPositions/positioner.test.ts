import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Layer, Option, Redacted, Schedule } from "effect"
import { withActor } from "../../src/context/Frames"
import { FeedHealth } from "../../src/feedPositions/FeedHealth"
import { FeedMode, takeSlot } from "../../src/feedPositions/FeedMode"
import { positionWaiting } from "../../src/feedPositions/positionWaiting"
import { verificationPassed, verifyLedger } from "../../src/ledger/Verification"
import type { Workspace } from "../../src/api/Workspace"
import { Records } from "../../src/records/Records"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { LogicalPostgres } from "../support/logicalPostgres"
import { freshWorkspace, testServices } from "../support/TestApp"

const someone = { kind: "user", id: "u-positioner", name: "Positioner", email: "positioner@example.com" } as const

/** The service in WAL mode over a PostgreSQL of this file's own with `wal_level=logical`. */
const WalServices = Layer.unwrap(
  Effect.map(LogicalPostgres, (postgres) =>
    testServices({ databaseUrl: Option.some(Redacted.make(postgres.url)), feedPositions: "wal" })
  )
).pipe(Layer.provideMerge(LogicalPostgres.layer))

const rowsOf = (workspace: Workspace) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ readonly position: string | null; readonly correlationId: string; readonly seq: string }>`
      SELECT e.position::text AS position, e.correlation_id::text AS "correlationId", e.seq::text AS seq
      FROM ${sql(workspace.table("audit_entries"))} AS e ORDER BY e.position NULLS LAST, e.seq`
  )

/** Waits (on the rows themselves) until every committed row of the workspace has its position. */
const allPositioned = (workspace: Workspace) =>
  rowsOf(workspace).pipe(
    Effect.repeat({
      schedule: Schedule.spaced("10 millis"),
      until: (rows) => rows.every((row) => row.position !== null)
    })
  )

/** Positions 1..n, and each unit's rows next to each other in their seq order. */
const expectWholeFeed = (rows: ReadonlyArray<{ position: string | null; correlationId: string; seq: string }>) => {
  expect(rows.map((row) => row.position)).toEqual(rows.map((_, i) => String(i + 1)))
  const seen = new Set<string>()
  for (let i = 0; i < rows.length; i++) {
    const row = rows[i]
    const before = rows[i - 1]
    if (row === undefined) continue
    if (before !== undefined && before.correlationId === row.correlationId) {
      expect(BigInt(before.seq) < BigInt(row.seq)).toBe(true)
    } else {
      expect(seen.has(row.correlationId)).toBe(false)
      seen.add(row.correlationId)
    }
  }
}

layer(WalServices, { excludeTestServices: true, timeout: "120 seconds" })("feed positions from the WAL", (it) => {
  it.effect("units committed concurrently get gapless positions in commit order, and the chain verifies", () =>
    Effect.gen(function* () {
      expect((yield* FeedMode).mode).toBe("wal")
      const workspace = yield* freshWorkspace
      const records = yield* Records
      const units = yield* UnitOfWork
      const sizes = Array.from({ length: 30 }, (_, i) => [1, 3, 1, 2, 1, 5][i % 6] ?? 1)
      const ids = yield* Effect.forEach(
        sizes,
        (size, unit) =>
          units.run(
            workspace,
            Effect.forEach(
              Array.from({ length: size }, (_, i) => i),
              (i) => records.create("crm/company", { name: `unit ${unit}, row ${i}` })
            )
          ),
        { concurrency: 8 }
      )
      // One record updated by many units: its rows must come in its commit order.
      const first = ids[0]?.[0]
      if (first === undefined) return yield* Effect.die("no record")
      yield* Effect.forEach(
        Array.from({ length: 12 }, (_, i) => i),
        (i) => units.run(workspace, records.update("crm/company", first.id, { name: `renamed ${i}` })),
        { concurrency: 4, discard: true }
      )
      // A unit that rolls back leaves no row and no position.
      yield* units
        .run(workspace, Effect.andThen(records.create("crm/company", { name: "rolled back" }), Effect.fail("no")))
        .pipe(Effect.flip)

      const rows = yield* allPositioned(workspace)
      const total = sizes.reduce((sum, size) => sum + size, 0) + 12
      expect(rows.length).toBe(total)
      expectWholeFeed(rows)

      const report = yield* verifyLedger(workspace, [])
      expect(report.chainFault).toBeNull()
      expect(report.rows).toBe(total)
      expect(verificationPassed(report)).toBe(true)

      const health = yield* (yield* FeedHealth).health
      expect(health.mode).toBe("wal")
      expect(health.holder).toBe(true)
    }).pipe(withActor(someone))
  )

  it.effect("a walsender holding the slot is ended for the holder, which streams it again and goes on", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { slot } = yield* FeedMode
      const activePid = Effect.map(
        sql<{ pid: number | null }>`SELECT active_pid AS pid FROM pg_replication_slots WHERE slot_name = ${slot}`,
        (rows) => rows[0]?.pid ?? null
      )
      const streaming = yield* activePid.pipe(
        Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (pid) => pid !== null })
      )
      // What a new holder finds when the dead holder's walsender has not exited yet: the slot active elsewhere.
      const ended = yield* takeSlot(slot)
      expect(ended).toEqual([{ pid: streaming, gone: true }])
      const again = yield* activePid.pipe(
        Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (pid) => pid !== null && pid !== streaming })
      )
      expect(again).not.toBe(streaming)
      const workspace = yield* freshWorkspace
      yield* (yield* UnitOfWork).run(workspace, (yield* Records).create("crm/company", { name: "after" }))
      expect((yield* allPositioned(workspace)).length).toBe(1)
    }).pipe(withActor(someone))
  )

  it.effect("the slot is confirmed past WAL that holds no unit, with nothing written after it", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { slot } = yield* FeedMode
      const workspace = yield* freshWorkspace
      yield* (yield* UnitOfWork).run(workspace, (yield* Records).create("crm/company", { name: "a unit first" }))
      yield* allPositioned(workspace)
      // A transaction of no unit: the slot sends nothing of it, only keepalives, which the positioner passes on
      // at most once per 50 ms. The last of them must still reach it, or the slot holds that WAL (and its lag
      // reads behind) until the server next asks for a reply, by default 30 s later.
      yield* sql`CREATE TABLE IF NOT EXISTS slot_keepalive_probe (n int)`
      yield* sql`INSERT INTO slot_keepalive_probe SELECT generate_series(1, 100)`
      const [written] = yield* sql<{ lsn: string }>`SELECT pg_current_wal_insert_lsn()::text AS lsn`
      const confirmed = yield* sql<{ caughtUp: boolean }>`
        SELECT confirmed_flush_lsn >= ${written?.lsn ?? "0/0"}::pg_lsn AS "caughtUp"
        FROM pg_replication_slots WHERE slot_name = ${slot}`.pipe(
        Effect.repeat({ schedule: Schedule.spaced("20 millis"), until: (rows) => rows[0]?.caughtUp === true }),
        Effect.timeout("10 seconds")
      )
      expect(confirmed[0]?.caughtUp).toBe(true)
      yield* sql`DROP TABLE slot_keepalive_probe`
    }).pipe(withActor(someone))
  )

  it.effect("rows committed without a message (before the slot existed) are positioned by the scan, once", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const records = yield* Records
      const units = yield* UnitOfWork
      const sql = yield* SqlClient.SqlClient
      const company = yield* units.run(workspace, records.create("crm/company", { name: "before the slot" }))
      yield* allPositioned(workspace)
      // A unit's rows as the WAL-mode INSERT leaves them, but whose message no slot will ever deliver: copies of
      // the row with new ids in one transaction (what a unit committed while no slot existed looks like).
      const table = sql(workspace.table("audit_entries"))
      yield* sql.withTransaction(
        sql`INSERT INTO ${table} (id, at, actor, correlation_id, business_object, business_object_id, record_version,
            operation, cause, record, changes, parent_correlation_id, salt)
          SELECT gen_random_uuid(), at, actor, gen_random_uuid(), business_object, business_object_id, record_version,
            operation, cause, record, changes, parent_correlation_id, salt
          FROM ${table} WHERE business_object_id = ${company.id}`
      )
      // Meanwhile units go on through the slot: the scan and the positioner share the counter.
      const live = yield* Effect.forkChild(
        Effect.forEach(
          Array.from({ length: 10 }, (_, i) => i),
          (i) => units.run(workspace, records.create("crm/company", { name: `live ${i}` })),
          { concurrency: 3, discard: true }
        )
      )
      const scanned = yield* positionWaiting(workspace.id, workspace.schema)
      yield* Fiber.join(live)
      // Whatever the scan took (the copied row at least) the positioner passes; nothing is positioned twice.
      expect(scanned).toBeGreaterThanOrEqual(1)
      const rows = yield* allPositioned(workspace)
      expect(rows.length).toBe(12)
      expectWholeFeed(rows)
      const report = yield* verifyLedger(workspace, [])
      expect(report.chainFault).toBeNull()
    }).pipe(withActor(someone))
  )
})
