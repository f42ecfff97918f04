import * as Reactivity from "effect/reactivity/Reactivity"
import { PgClient } from "@effect/sql-pg"
import type { SqlError } from "effect/sql/SqlError"
import { expect, layer } from "@effect/vitest"
import { Context, Deferred, Duration, Effect, Exit, Fiber, Layer, Redacted, Schedule } from "effect"
import { withActor } from "../../src/context/Frames"
import { Records } from "../../src/records/Records"
import type { Workspace } from "../../src/api/Workspace"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { baseUrl, freshWorkspace, testApp, testDatabaseUrl, uniqueSuffix } from "../support/TestApp"
import type { StoredRecord } from "../../src/api/StoredRecord"
import { createRecord, recordsOf, signedInMember, timelineCall, timelineOf } from "../support/api"
import type { Client } from "../support/api"
import { refusal } from "../support/apiCaller"

/**
 * Faults on the shared PostgreSQL, aimed only at this file's own backends:
 * every test app names its connections (`<name>/write`, `/read`, `/health`)
 * and the tests terminate only backends carrying that name. "Promptly" is
 * never a time: a read answers promptly when it completes while a lock the
 * test holds is still held.
 */

/** A connection outside the service: holds locks and terminates the service's backends. */
class Outside extends Context.Service<Outside, PgClient.PgClient>()("test/Outside") {}

const OutsideLive = Layer.effect(
  Outside,
  PgClient.make({
    url: Redacted.make(testDatabaseUrl),
    applicationName: `faults-test-outside-${uniqueSuffix()}`,
    maxConnections: 4
  })
).pipe(Layer.provide(Reactivity.layer))

/** The service with its own connection names; long lock, statement and acquire waits unless a test wants them short. */
const appNamed = (name: string, overrides: Parameters<typeof testApp>[0] = {}) =>
  Layer.merge(
    testApp({
      databaseApplicationName: name,
      databasePoolSize: 2,
      databaseLockTimeout: Duration.minutes(1),
      databaseAcquireTimeout: Duration.minutes(1),
      databaseStatementTimeout: Duration.minutes(1),
      ...overrides
    }),
    OutsideLive
  )

/**
 * Runs `statements` in a transaction on the outside connection and keeps it
 * open (with its locks) until `release`, or until the test's scope ends.
 */
const holding = (statements: (sql: PgClient.PgClient) => Effect.Effect<unknown, SqlError>) =>
  Effect.gen(function* () {
    const outside = yield* Outside
    const held = yield* Deferred.make<void>()
    const released = yield* Deferred.make<void>()
    const fiber = yield* outside
      .withTransaction(
        Effect.gen(function* () {
          yield* statements(outside)
          yield* Deferred.succeed(held, undefined)
          yield* Deferred.await(released)
        })
      )
      .pipe(Effect.orDie, Effect.forkChild)
    yield* Deferred.await(held)
    const release = Deferred.succeed(released, undefined).pipe(Effect.andThen(Fiber.join(fiber)))
    yield* Effect.addFinalizer(() => release)
    return release
  })

const lockRow = (workspace: Workspace, id: string) =>
  holding((sql) => sql`SELECT 1 FROM ${sql(workspace.table("records"))} WHERE id = ${id} FOR UPDATE`)

interface Backend {
  readonly pid: number
  readonly query: string
}

/** The service's backends of one pool that wait for a lock. */
const waitingOnLocks = (application: string) =>
  Effect.flatMap(Outside, (sql) =>
    sql<Backend>`SELECT pid, query FROM pg_stat_activity
      WHERE application_name = ${application} AND wait_event_type = 'Lock'`.pipe(Effect.orDie)
  )

/** Waits (polling pg_stat_activity) until `holds` is true of the pool's backends waiting on locks. */
const untilWaiting = (application: string, holds: (backends: ReadonlyArray<Backend>) => boolean) =>
  waitingOnLocks(application).pipe(
    Effect.filterOrFail(holds, () => "not yet"),
    Effect.retry(Schedule.spaced("20 millis")),
    Effect.orDie
  )

const terminate = (pid: number) =>
  Effect.flatMap(Outside, (sql) => sql`SELECT pg_terminate_backend(${pid})`.pipe(Effect.orDie))

const company = (client: Client, name: string) => createRecord(client, "crm/company", { name, wonDeals: 0 })
const companies = (client: Client) => recordsOf(client, "crm/company")

const someone = { kind: "user", id: "u-deadlock", name: "Ann", email: "ann@example.com" } as const

const faultsApp = `faults-${uniqueSuffix()}`

layer(appNamed(faultsApp), { excludeTestServices: true })("database faults on a live service", (it) => {
  it.effect("a write whose connection is killed before COMMIT is run again on a fresh one and committed once", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const record = yield* company(client, "Acme")
      const release = yield* lockRow(workspace, record.id)

      const patch = yield* Effect.forkChild(companies(client).update(record.id, { name: "Acme Two" }))
      const [first] = yield* untilWaiting(`${faultsApp}/write`, (backends) => backends.length === 1)
      yield* terminate(first!.pid)
      // The unit runs again, and waits on the same lock from a new backend.
      yield* untilWaiting(`${faultsApp}/write`, (backends) => backends.some((b) => b.pid !== first!.pid))
      yield* release

      const updated = (yield* Fiber.join(patch)).body
      expect(updated.values.name).toBe("Acme Two")
      const timeline = yield* timelineOf(client, "crm/company", record.id)
      expect(timeline.entries.map((e) => e.operation)).toEqual(["updated", "created"])
    })
  )

  it.effect("a read whose connection is killed is a 503 with Retry-After", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const record = yield* company(client, "Readable")
      const release = yield* holding(
        (sql) => sql`LOCK TABLE ${sql(workspace.table("records"))} IN ACCESS EXCLUSIVE MODE`
      )

      const read = yield* Effect.forkChild(refusal(companies(client).get(record.id)))
      const [reader] = yield* untilWaiting(`${faultsApp}/read`, (backends) => backends.length === 1)
      yield* terminate(reader!.pid)
      const response = yield* Fiber.join(read)
      expect(response.status).toBe(503)
      expect(response.headers.get("retry-after")).toBe("1")
      expect(response.body).toMatchObject({ _tag: "ServiceUnavailable" })
      yield* release
      expect((yield* companies(client).get(record.id)).body).toMatchObject({ id: record.id })
    })
  )

  it.effect(
    "writes stuck behind a row lock drain only the write pool: reads, another tenant and readiness still answer",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client } = yield* signedInMember(base, workspace)
        const locked = yield* company(client, "Locked")
        const other = yield* company(client, "Other")
        const elsewhere = yield* freshWorkspace
        const { client: tenant } = yield* signedInMember(base, elsewhere)
        const theirs = yield* company(tenant, "Theirs")
        const release = yield* lockRow(workspace, locked.id)

        // One more write than the write pool has connections: two wait on the lock, the third for a connection.
        // Forked from the test's fiber: a fiber forked by a concurrent forEach's worker ends with that worker.
        const writes = yield* Effect.forEach(["One", "Two", "Three"], (name) =>
          Effect.forkChild(companies(client).update(locked.id, { name }))
        )
        yield* untilWaiting(`${faultsApp}/write`, (backends) => backends.length === 2)

        // All of these complete while the lock is still held.
        expect((yield* companies(client).get(other.id)).body).toMatchObject({ id: other.id })
        yield* companies(client).list()
        yield* timelineCall(client, "crm/company", other.id)
        yield* client.call((api) => api.auth.me())
        expect((yield* companies(tenant).get(theirs.id)).body).toMatchObject({ id: theirs.id })
        expect((yield* tenant.call((api) => api.health.ready())).body).toMatchObject({ database: { status: "up" } })
        expect((yield* waitingOnLocks(`${faultsApp}/write`)).length).toBe(2)

        yield* release
        for (const write of writes) expect((yield* Fiber.join(write)).status).toBe(200)
        const timeline = yield* timelineOf(client, "crm/company", locked.id)
        expect(timeline.entries.map((e) => e.operation)).toEqual(["updated", "updated", "updated", "created"])
      })
  )

  it.effect("two units that deadlock both commit: the one PostgreSQL aborts is run again", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const [a, b] = [yield* company(client, "A"), yield* company(client, "B")]
      const units = yield* UnitOfWork
      const records = yield* Records
      const holdsA = yield* Deferred.make<void>()
      const holdsB = yield* Deferred.make<void>()
      // Each takes one row lock, waits until the other has taken its own, then wants the other's.
      const crossing = (
        first: StoredRecord,
        mine: Deferred.Deferred<void>,
        theirs: Deferred.Deferred<void>,
        second: StoredRecord
      ) =>
        units
          .run(
            workspace,
            Effect.gen(function* () {
              yield* records.update("crm/company", first.id, { wonDeals: 1 })
              yield* Deferred.succeed(mine, undefined)
              yield* Deferred.await(theirs)
              yield* records.update("crm/company", second.id, { wonDeals: 2 })
            })
          )
          .pipe(withActor(someone), Effect.exit)
      const [one, two] = yield* Effect.all([crossing(a, holdsA, holdsB, b), crossing(b, holdsB, holdsA, a)], {
        concurrency: 2
      })
      expect(Exit.isSuccess(one) && Exit.isSuccess(two)).toBe(true)
      for (const record of [a, b]) {
        const operations = (yield* timelineOf(client, "crm/company", record.id)).entries.map((e) => e.operation)
        expect(operations).toEqual(["updated", "updated", "created"])
      }
    })
  )

  it.effect("a connection lost during COMMIT is a 503 that says the outcome is unknown, and is not run again", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const record = yield* company(client, "Committing")
      const key = `commit:${workspace.id}`
      const outside = yield* Outside
      // A deferred trigger runs at COMMIT and waits there for an advisory lock the test holds.
      yield* outside.unsafe(`CREATE FUNCTION ${workspace.schema}.wait_at_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN PERFORM pg_advisory_xact_lock(hashtext('${key}')); RETURN NULL; END $$`)
      yield* outside.unsafe(`CREATE CONSTRAINT TRIGGER wait_at_commit AFTER UPDATE ON ${workspace.schema}.records
        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ${workspace.schema}.wait_at_commit()`)
      const release = yield* holding((sql) => sql`SELECT pg_advisory_xact_lock(hashtext(${key}))`)

      const patch = yield* Effect.forkChild(refusal(companies(client).update(record.id, { name: "Maybe" })))
      const [committing] = yield* untilWaiting(`${faultsApp}/write`, (backends) =>
        backends.some((b) => b.query === "COMMIT")
      )
      yield* terminate(committing!.pid)
      // Answered while the advisory lock is still held: a second attempt would have waited on it.
      const response = yield* Fiber.join(patch)
      expect(response.status).toBe(503)
      expect(response.headers.get("retry-after")).toBe("1")
      expect(JSON.stringify(response.body)).toContain("the outcome is unknown")
      yield* release

      const now = (yield* companies(client).get(record.id)).body
      expect(now.values.name).toBe("Committing")
    })
  )
})

const shortLocks = `faults-short-${uniqueSuffix()}`

layer(appNamed(shortLocks, { databaseLockTimeout: Duration.millis(200) }), { excludeTestServices: true })(
  "lock waits are bounded",
  (it) => {
    it.effect(
      "a write to a record locked elsewhere answers 503 with Retry-After once lock_timeout passes, and changes nothing",
      () =>
        Effect.gen(function* () {
          const workspace = yield* freshWorkspace
          const { client } = yield* signedInMember(yield* baseUrl, workspace)
          const record = yield* company(client, "Busy")
          const release = yield* lockRow(workspace, record.id)

          // Answered while the lock is still held.
          const response = yield* refusal(companies(client).update(record.id, { name: "Never" }))
          expect(response.status).toBe(503)
          expect(response.headers.get("retry-after")).toBe("1")
          expect(response.body).toEqual({
            _tag: "ServiceUnavailable",
            message: "the data is being changed by another write; retry later",
            retryAfter: 1,
            requestId: expect.any(String)
          })
          yield* release

          const now = (yield* companies(client).get(record.id)).body
          expect(now.values.name).toBe("Busy")
          expect((yield* timelineOf(client, "crm/company", record.id)).entries.map((e) => e.operation)).toEqual([
            "created"
          ])
        })
    )
  }
)
