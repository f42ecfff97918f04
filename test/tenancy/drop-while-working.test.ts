import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Exit, Fiber, Option } from "effect"
import { AppConfig } from "../../src/config/AppConfig"
import { withActor } from "../../src/context/Frames"
import { PluginJobs } from "../../src/plugins/PluginJobs"
import { queueName } from "../../src/queue/DurableQueues"
import { Records } from "../../src/records/Records"
import type { Workspace } from "../../src/api/Workspace"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { eventually } from "../broadcast/streamHelpers"
import { freshUserActor, queuedIn } from "../support/queue"
import { holdingJobs, TestPlugins } from "../support/testPlugin"
import { freshWorkspace, testApp, uniqueSuffix } from "../support/TestApp"

const schemaExists = (schema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{
        readonly n: number
      }>`SELECT count(*)::int AS n FROM information_schema.schemata WHERE schema_name = ${schema}`,
      (rows) => (rows[0]?.n ?? 0) > 0
    )
  ).pipe(Effect.orDie)

/** The workspace's elements still waiting in either durable queue. */
const pendingWork = (workspace: Workspace) =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    const jobs = yield* queuedIn(queueName(config.queuePrefix, "jobs"), workspace)
    const runs = yield* queuedIn(queueName(config.queuePrefix, "workflows"), workspace)
    return [...jobs, ...runs].filter((element) => !element.completed)
  })

/**
 * A table of the schema that the backend running `DROP SCHEMA <schema>` holds
 * while it waits for another lock (None when it waits holding none of them).
 */
const tableHeldByWaitingDrop = (schema: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ readonly table: string | null; readonly waiting: boolean }>`
      SELECT (SELECT c.relname::text FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE l.pid = a.pid AND l.granted AND l.mode = 'AccessExclusiveLock'
                AND c.relkind = 'r' AND n.nspname = ${schema} AND c.relname <> 'completed_runs'
              LIMIT 1) AS table,
        EXISTS (SELECT 1 FROM pg_locks w WHERE w.pid = a.pid AND NOT w.granted) AS waiting
      FROM pg_stat_activity a
      WHERE a.query LIKE 'DROP SCHEMA%' AND a.query LIKE ${`%"${schema}"%`}`
  ).pipe(Effect.orDie)

/** Fails with what did not happen, rather than leaving the test to time out. */
const within =
  (what: string, duration: Duration.Input) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    Effect.timeoutOrElse(effect, {
      duration,
      orElse: () => Effect.fail(new Error(`${what}: not within ${Duration.format(Duration.fromInputUnsafe(duration))}`))
    }).pipe(Effect.orDie)

layer(testApp({}, TestPlugins), { excludeTestServices: true })("dropping a workspace while its work runs", (it) => {
  it.effect(
    "stops its running jobs and queued work, survives a deadlock with another instance's unit, leaves no schema behind",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const workspaces = yield* Workspaces
        const units = yield* UnitOfWork
        const records = yield* Records
        const workspace = yield* freshWorkspace
        const actor = yield* freshUserActor(workspace)

        // Workflow runs: archiving deals starts one each. Jobs: four that hold their unit open
        // (two run, as many as this instance takes at once; two wait in the queue).
        const keys = Array.from({ length: 4 }, () => uniqueSuffix())
        yield* units
          .run(
            workspace,
            Effect.gen(function* () {
              for (let i = 0; i < 3; i++) {
                const deal = yield* records.create("crm/deal", { title: `deal ${i}` })
                yield* records.archive("crm/deal", deal.id)
              }
              for (const key of keys)
                yield* records.runPlugin(PluginJobs.use((jobs) => jobs.enqueue("test/hold", { key })))
            })
          )
          .pipe(withActor(actor))
        yield* eventually(
          "two held jobs are running",
          Effect.sync(() => keys.filter((key) => holdingJobs.has(key)).length === 2)
        )

        // Another instance's worker in the middle of a unit in this workspace: it holds a lock
        // on completed_runs, and once DROP SCHEMA waits for it, asks for a table the drop holds.
        const foreignHolds = yield* Deferred.make<void>()
        const dropHolds = yield* Deferred.make<Option.Option<string>>()
        const foreign = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              yield* sql`INSERT INTO ${sql(workspace.table("completed_runs"))} (id, kind, name)
                VALUES (${crypto.randomUUID()}, 'job', 'elsewhere')`
              yield* Deferred.succeed(foreignHolds, undefined)
              const held = yield* Deferred.await(dropHolds)
              if (Option.isSome(held)) yield* sql`LOCK TABLE ${sql(workspace.table(held.value))} IN ROW EXCLUSIVE MODE`
            })
          )
          .pipe(Effect.exit, Effect.forkChild)
        yield* Deferred.await(foreignHolds).pipe(within("the other instance's unit holds its lock", "20 seconds"))

        const drop = yield* Effect.forkChild(workspaces.drop(workspace))
        let held: Option.Option<string> = Option.none()
        yield* eventually(
          "DROP SCHEMA waits for the other instance's unit",
          Effect.map(tableHeldByWaitingDrop(workspace.schema), (rows) => {
            const waiting = rows.find((row) => row.waiting)
            held = Option.fromNullishOr(waiting?.table)
            return waiting !== undefined
          }),
          "30 seconds"
        )
        yield* Deferred.succeed(dropHolds, held)

        // The drop ends (a deadlock victim on either side is fine), whatever the other unit did.
        const dropped = yield* Fiber.await(drop).pipe(within("the drop ends", "90 seconds"))
        expect(Exit.isSuccess(dropped), String(dropped)).toBe(true)
        yield* Fiber.join(foreign).pipe(within("the other instance's unit ends", "20 seconds"))

        expect(yield* schemaExists(workspace.schema)).toBe(false)
        expect(Option.isNone(yield* workspaces.findBySlug(workspace.slug))).toBe(true)
        expect(yield* pendingWork(workspace)).toEqual([])
        // The held jobs were stopped (their units rolled back), not left running.
        expect(keys.filter((key) => holdingJobs.has(key))).toEqual([])

        // The workers go on: a job of another workspace still runs.
        const other = yield* freshWorkspace
        const otherActor = yield* freshUserActor(other)
        yield* units
          .run(
            other,
            records.runPlugin(
              PluginJobs.use((jobs) => jobs.enqueue("test/flaky", { key: uniqueSuffix(), failures: 0 }))
            )
          )
          .pipe(withActor(otherActor))
        yield* eventually(
          "the other workspace's job is done",
          Effect.map(
            AppConfig.use((config) => queuedIn(queueName(config.queuePrefix, "jobs"), other)),
            (rows) => rows.length === 1 && rows[0]?.completed === true
          )
        )
      }),
    180_000
  )
})
