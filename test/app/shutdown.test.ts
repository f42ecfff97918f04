import { connect } from "node:net"
import { SqlClient } from "effect/sql"
import { describe, expect, layer } from "@effect/vitest"
import { Deferred, Effect, Exit, Fiber } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { eventually } from "../broadcast/streamHelpers"
import { createRecord, recordsOf, signedInMember } from "../support/api"
import { groupAlive, startService } from "../support/service"
import type { RunningService } from "../support/service"
import { openSse } from "../support/sse"
import { freshWorkspace, TestServices, uniqueSuffix } from "../support/TestApp"
import { queueTable } from "../../src/tenancy/migrations/durableQueue"

const deal = "crm/deal"

/**
 * Takes `lock` (e.g. `LOCK TABLE ... IN EXCLUSIVE MODE`) in a transaction of
 * the test's own and holds it until `release`; the scope releases it too.
 */
const holdLock = (lock: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const locked = yield* Deferred.make<void>()
    const released = yield* Deferred.make<void>()
    const holder = yield* sql
      .withTransaction(
        sql
          .unsafe(lock)
          .pipe(Effect.andThen(Deferred.succeed(locked, undefined)), Effect.andThen(Deferred.await(released)))
      )
      .pipe(Effect.orDie, Effect.forkScoped)
    yield* Deferred.await(locked)
    const release = Deferred.succeed(released, undefined).pipe(Effect.andThen(Fiber.join(holder)))
    yield* Effect.addFinalizer(() => release)
    return { release }
  })

/** How many lock requests on `table` are waiting. */
const waitingOn = (table: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks WHERE relation = ${table}::regclass AND NOT granted`
  ).pipe(
    Effect.map((rows) => rows[0]?.n ?? 0),
    Effect.orDie
  )

/** Whether a new TCP connection to `port` is refused. */
const refusesConnections = (base: string) =>
  Effect.callback<boolean>((resume) => {
    const socket = connect(Number(new URL(base).port), "127.0.0.1")
    socket.once("connect", () => {
      socket.destroy()
      resume(Effect.succeed(false))
    })
    socket.once("error", (error: NodeJS.ErrnoException) => resume(Effect.succeed(error.code === "ECONNREFUSED")))
  })

const countRecords = (workspace: Workspace, businessObject: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{
        n: number
      }>`SELECT count(*)::int AS n FROM ${sql(workspace.table("records"))} WHERE business_object = ${businessObject}`
  ).pipe(
    Effect.map((rows) => rows[0]?.n ?? 0),
    Effect.orDie
  )

const QueueRow = (queue: string, workspace: Workspace) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ completed: boolean; attempts: number; acquiredBy: string | null }>`
      SELECT state = 'completed' AS completed, attempts, acquired_by FROM ${sql(queueTable)}
      WHERE queue_name = ${queue} AND (element::jsonb)->'workspace'->>'id' = ${workspace.id}`
  ).pipe(Effect.orDie)

const messages = (service: RunningService) => Effect.map(service.logs, (lines) => lines.map((line) => line.message))

layer(TestServices, { excludeTestServices: true })("graceful shutdown of the real service", (it) => {
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it.effect(
      `${signal === "SIGINT" ? "SIGINT (twice)" : signal} with requests in flight and a stream open: every request answered in full, the stream ends with 'shutdown', exit 0`,
      () =>
        Effect.gen(function* () {
          const service = yield* startService({ DRAIN_TIMEOUT_MS: "30000", QUEUE_PREFIX: `t-${uniqueSuffix()}` })
          const workspace = yield* freshWorkspace
          const { client, cookie } = yield* signedInMember(service.base, workspace)
          const stream = yield* openSse(`${service.base}/api/broadcast`, { cookie })
          expect(stream.status).toBe(200)

          // Writes wait on the test's table lock: they are in flight, deterministically, until it is released.
          const lock = yield* holdLock(`LOCK TABLE ${workspace.table("records")} IN EXCLUSIVE MODE`)
          const inFlight = 5
          // Forked one after the other by this fiber: in Effect 4 a fiber forked inside a concurrent `forEach` is the
          // child of that element's fiber, and is interrupted as soon as it ends.
          const requests = yield* Effect.forEach(
            Array.from({ length: inFlight }, (_, i) => i),
            (i) => Effect.forkChild(Effect.exit(recordsOf(client, deal).create({ title: `In flight ${i}` })))
          )
          yield* eventually(
            "every write waits on the lock",
            Effect.map(waitingOn(workspace.table("records")), (n) => n === inFlight),
            "30 seconds"
          )

          yield* service.signal(signal)
          yield* service.waitForLog("shutdown: draining")
          if (signal === "SIGINT") {
            // Ctrl-C under `npm start` arrives twice (the terminal's and npm's): the second must not cut the drain.
            yield* service.signal(signal)
            yield* service.waitForLog("shutdown: SIGINT received again; the drain goes on")
          }
          // The listener is closed: a new connection is refused.
          yield* eventually("new connections refused", refusesConnections(service.base))
          // The stream gets the last event (with a retry hint) and ends.
          yield* stream.waitFor((events) => events.some((event) => event.event === "shutdown"))
          yield* stream.ended
          expect(yield* stream.raw).toMatch(/retry: \d+\nevent: shutdown\ndata: \{\}\n\n$/)

          // The writes still wait; now they may go on, and each gets its whole answer.
          yield* lock.release
          const answers = yield* Effect.forEach(requests, Fiber.join)
          for (const answer of answers) {
            expect(Exit.isSuccess(answer)).toBe(true)
            if (Exit.isSuccess(answer)) {
              expect(answer.value.status).toBe(201)
              expect(answer.value.headers.get("connection")).toBe("close")
              expect(answer.value.body).toMatchObject({
                state: "operational",
                values: { title: expect.stringMatching(/^In flight/) }
              })
            }
          }
          const exit = yield* service.exited
          expect(exit).toEqual({ code: 0, signal: null })
          expect(yield* messages(service)).toContain("shutdown: drained")
          expect(yield* countRecords(workspace, deal)).toBe(inFlight)
        }),
      120_000
    )
  }

  const followUpJob = (service: RunningService, workspace: Workspace) =>
    Effect.gen(function* () {
      const { client } = yield* signedInMember(service.base, workspace)
      const created = yield* createRecord(client, deal, { title: "Kiosk" })
      // The job's claim (its first write) waits on the test's lock: the job is running, deterministically.
      const lock = yield* holdLock(`LOCK TABLE ${workspace.table("completed_runs")} IN EXCLUSIVE MODE`)
      yield* recordsOf(client, deal).action("follow-up", created.id)
      yield* eventually(
        "the job waits on the lock",
        Effect.map(waitingOn(workspace.table("completed_runs")), (n) => n === 1),
        "30 seconds"
      )
      return lock
    })

  it.effect(
    "a job running at SIGTERM finishes within the drain: done once, exit 0",
    () =>
      Effect.gen(function* () {
        const prefix = `t-${uniqueSuffix()}`
        const service = yield* startService({ DRAIN_TIMEOUT_MS: "30000", QUEUE_PREFIX: prefix })
        const workspace = yield* freshWorkspace
        const lock = yield* followUpJob(service, workspace)

        yield* service.signal("SIGTERM")
        yield* service.waitForLog("shutdown: draining")
        yield* lock.release
        expect(yield* service.exited).toEqual({ code: 0, signal: null })
        expect(yield* messages(service)).toContain("shutdown: drained")
        expect(yield* QueueRow(`${prefix}:jobs`, workspace)).toEqual([
          { completed: true, attempts: 1, acquiredBy: null }
        ])
        expect(yield* countRecords(workspace, "crm/activity")).toBe(1)
      }),
    120_000
  )

  it.effect(
    "a job still running at the drain's deadline goes back to the queue at once, and runs exactly once after a restart",
    () =>
      Effect.gen(function* () {
        const prefix = `t-${uniqueSuffix()}`
        const first = yield* startService({ DRAIN_TIMEOUT_MS: "1000", QUEUE_PREFIX: prefix })
        const workspace = yield* freshWorkspace
        const lock = yield* followUpJob(first, workspace)

        yield* first.signal("SIGTERM")
        const timedOut = yield* first.waitForLog("shutdown: drain timed out; what was left has been cut")
        expect(timedOut.annotations.cut).toEqual(["job"])
        expect(yield* first.exited).toEqual({ code: 0, signal: null })
        // Released, not left locked for the queue's lock expiry; the interruption counts no attempt; nothing written.
        expect(yield* QueueRow(`${prefix}:jobs`, workspace)).toEqual([
          { completed: false, attempts: 0, acquiredBy: null }
        ])
        expect(yield* countRecords(workspace, "crm/activity")).toBe(0)

        yield* lock.release
        const second = yield* startService({ QUEUE_PREFIX: prefix })
        yield* eventually(
          "the job is done after the restart",
          Effect.map(QueueRow(`${prefix}:jobs`, workspace), (rows) => rows[0]?.completed === true),
          "30 seconds"
        )
        expect(yield* QueueRow(`${prefix}:jobs`, workspace)).toEqual([
          { completed: true, attempts: 1, acquiredBy: null }
        ])
        expect(yield* countRecords(workspace, "crm/activity")).toBe(1)
        yield* second.signal("SIGTERM")
        expect(yield* second.exited).toEqual({ code: 0, signal: null })
      }),
    180_000
  )
})

describe("npm start", () => {
  layer(TestServices, { excludeTestServices: true })("signals", (it) => {
    it.effect(
      "SIGTERM to npm stops the service: npm exits 0 and nothing of its process group is left",
      () =>
        Effect.gen(function* () {
          const service = yield* startService({ QUEUE_PREFIX: `t-${uniqueSuffix()}` }, ["npm", "start", "--silent"])
          expect(groupAlive(service.pid)).toBe(true)
          yield* service.signal("SIGTERM")
          expect(yield* service.exited).toEqual({ code: 0, signal: null })
          expect(yield* messages(service)).toContain("shutdown: drained")
          expect(groupAlive(service.pid)).toBe(false)
        }),
      240_000
    )
  })
})
