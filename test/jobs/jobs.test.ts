import { expect, layer } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect, Exit, Option } from "effect"
import { AppConfig } from "../../src/config/AppConfig"
import type { Actor } from "../../src/api/Actor"
import { withActor } from "../../src/context/Frames"
import type { RecordValues } from "../../src/api/Json"
import { Conflict } from "../../src/api/errors"
import { JobQueue } from "../../src/jobs/JobQueue"
import { PluginJobs } from "../../src/plugins/PluginJobs"
import { FailedWork } from "../../src/queue/FailedWork"
import { queueName } from "../../src/queue/DurableQueues"
import { Records } from "../../src/records/Records"
import type { Workspace } from "../../src/api/Workspace"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { eventually } from "../broadcast/streamHelpers"
import { flakyRuns, TestPlugins } from "../support/testPlugin"
import { queuedIn, freshUserActor } from "../support/queue"
import { freshWorkspace, testApp, uniqueSuffix } from "../support/TestApp"

/** This workspace's jobs in the durable queue. */
const queuedJobs = (workspace: Workspace) =>
  Effect.flatMap(AppConfig, (config) => queuedIn(queueName(config.queuePrefix, "jobs"), workspace))

const counts = (workspace: Workspace) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ records: number; audit: number }>`SELECT
      (SELECT count(*)::int FROM ${sql(workspace.table("records"))}) AS records,
      (SELECT count(*)::int FROM ${sql(workspace.table("audit_entries"))}) AS audit`
    return row
  }).pipe(Effect.orDie)

/** Enqueues `job` in a unit of work, as `actor` (or with none), optionally failing the unit afterwards. */
const enqueue = (workspace: Workspace, actor: Actor | null, job: string, payload: RecordValues, failAfter = false) =>
  Effect.gen(function* () {
    const units = yield* UnitOfWork
    const records = yield* Records
    const work = records
      .runPlugin(Effect.flatMap(PluginJobs, (jobs) => jobs.enqueue(job, payload)))
      .pipe(
        Effect.tap(() =>
          failAfter ? Effect.fail(new Conflict({ message: "the unit fails after enqueueing" })) : Effect.void
        )
      )
    const unit = units.run(workspace, work)
    return yield* Effect.exit(actor === null ? unit : unit.pipe(withActor(actor)))
  })

layer(testApp({}, TestPlugins), { excludeTestServices: true })("background jobs (durable, in PostgreSQL)", (it) => {
  it.effect(
    "enqueueing is part of the unit: a rolled-back unit enqueues nothing, a committed one exactly one job",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const actor = yield* freshUserActor(workspace)
        const key = uniqueSuffix()
        const rolledBack = yield* enqueue(workspace, actor, "test/flaky", { key, failures: 0 }, true)
        expect(Exit.isFailure(rolledBack)).toBe(true)
        expect(yield* queuedJobs(workspace)).toEqual([])

        const committed = yield* enqueue(workspace, actor, "test/flaky", { key, failures: 0 })
        expect(Exit.isSuccess(committed)).toBe(true)
        yield* eventually(
          "the job is done",
          Effect.map(queuedJobs(workspace), (rows) => rows[0]?.completed === true)
        )
        expect(yield* queuedJobs(workspace)).toEqual([
          { id: Exit.isSuccess(committed) ? committed.value : "", completed: true, attempts: 1, lastFailure: null }
        ])
        expect(flakyRuns.get(key)).toHaveLength(1)
      })
  )

  it.effect("no actor, no job: enqueueing with no actor in context fails and rolls the whole unit back", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const units = yield* UnitOfWork
      const records = yield* Records
      // A draft writes no audit row, so only the enqueue can notice the missing actor.
      const exit = yield* Effect.exit(
        units.run(
          workspace,
          Effect.andThen(
            records.create("test/widget", { name: "draft" }, { draft: true }),
            records.runPlugin(
              Effect.flatMap(PluginJobs, (jobs) => jobs.enqueue("test/flaky", { key: "x", failures: 0 }))
            )
          )
        )
      )
      expect(Exit.isFailure(exit) ? Option.map(Exit.getCause(exit), String) : Option.none()).toEqual(
        Option.some(expect.stringContaining("no actor in context while enqueueing job test/flaky"))
      )
      expect(yield* counts(workspace)).toEqual({ records: 0, audit: 0 })
      expect(yield* queuedJobs(workspace)).toEqual([])
    })
  )

  it.effect(
    "a failing job is retried with growing waits; what a failed run wrote is rolled back; the last run's rows name the enqueuer",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const actor = yield* freshUserActor(workspace)
        const key = uniqueSuffix()
        yield* enqueue(workspace, actor, "test/flaky", { key, failures: 2 })
        yield* eventually(
          "the job is done",
          Effect.map(queuedJobs(workspace), (rows) => rows[0]?.completed === true)
        )

        const [job] = yield* queuedJobs(workspace)
        expect(job).toMatchObject({ completed: true, attempts: 3 })
        const runs = flakyRuns.get(key) ?? []
        expect(runs).toHaveLength(3)
        // JOB_RETRY_BASE_MS is 50 in tests: the second run waits >= 50 ms, the third >= 100 ms.
        expect(runs[1]! - runs[0]!).toBeGreaterThanOrEqual(50)
        expect(runs[2]! - runs[1]!).toBeGreaterThanOrEqual(100)

        const sql = yield* SqlClient.SqlClient
        const widgets = yield* sql<{
          name: string
        }>`SELECT values->>'name' AS name FROM ${sql(workspace.table("records"))}`
        expect(widgets).toEqual([{ name: `${key} run 3` }])
        const audit = yield* sql<{
          actor: unknown
          cause: unknown
        }>`SELECT actor, cause FROM ${sql(workspace.table("audit_entries"))}`
        expect(audit).toEqual([{ actor, cause: { kind: "job", job: "test/flaky", jobId: job!.id } }])
      })
  )

  it.effect(
    "a job that keeps failing ends in the failed state, listed with its last failure, never dropped; it can be retried",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const actor = yield* freshUserActor(workspace)
        yield* enqueue(workspace, actor, "test/doomed", {})
        const failedWork = yield* FailedWork
        const failedHere = Effect.map(failedWork.list, (items) =>
          items.filter((item) => item.workspace === workspace.slug)
        )
        yield* eventually(
          "the job has failed for good",
          Effect.map(failedHere, (items) => items.length === 1)
        )

        const [job] = yield* queuedJobs(workspace)
        expect(job).toMatchObject({ completed: false, attempts: 3 })
        expect(job?.lastFailure).toContain("doomed to fail")
        expect(yield* failedHere).toEqual([
          {
            id: job!.id,
            kind: "job",
            name: "test/doomed",
            workspace: workspace.slug,
            attempts: 3,
            lastFailure: job!.lastFailure,
            failedAt: expect.any(Date)
          }
        ])
        expect(yield* counts(workspace)).toEqual({ records: 0, audit: 0 })

        // A second chance: three more attempts, then failed again.
        expect(yield* failedWork.retry(job!.id)).toBe(true)
        expect(yield* failedWork.retry(crypto.randomUUID())).toBe(false)
        yield* eventually(
          "taken again",
          Effect.map(queuedJobs(workspace), (rows) => rows[0]?.attempts !== 3)
        )
        yield* eventually(
          "failed again",
          Effect.map(failedHere, (items) => items.length === 1)
        )
        expect(yield* counts(workspace)).toEqual({ records: 0, audit: 0 })
      })
  )

  it.effect(
    "an envelope without an actor: the handler runs, every write of it fails and rolls back, and the job ends failed",
    () =>
      Effect.gen(function* () {
        const workspace = yield* freshWorkspace
        const key = uniqueSuffix()
        // Written past `enqueue` (which refuses to capture no actor), as an old or hand-made envelope would be.
        yield* (yield* JobQueue).queue.offer({
          workspace,
          job: "test/flaky",
          payload: { key, failures: 0 },
          actor: null
        })
        yield* eventually(
          "the job has failed for good",
          Effect.map(queuedJobs(workspace), (rows) => rows[0]?.attempts === 3)
        )
        const [job] = yield* queuedJobs(workspace)
        expect(job?.completed).toBe(false)
        expect(job?.lastFailure).toContain("no actor in context while auditing created of test/widget")
        expect(flakyRuns.get(key)).toHaveLength(3)
        expect(yield* counts(workspace)).toEqual({ records: 0, audit: 0 })
      })
  )
})
