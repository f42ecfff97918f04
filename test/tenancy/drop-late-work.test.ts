import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber } from "effect"
import { AppConfig } from "../../src/config/AppConfig"
import { JobQueue } from "../../src/jobs/JobQueue"
import { queueName } from "../../src/queue/DurableQueues"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { eventually } from "../broadcast/streamHelpers"
import { queuedIn } from "../support/queue"
import { freshWorkspace, TestServices } from "../support/TestApp"

/** Whether a `DROP SCHEMA` of `schema` is waiting for a lock. */
const dropWaits = (schema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql`SELECT 1 FROM pg_stat_activity
        WHERE query LIKE 'DROP SCHEMA%' AND query LIKE ${`%"${schema}"%`} AND wait_event_type = 'Lock'`,
      (rows) => rows.length > 0
    )
  ).pipe(Effect.orDie)

// No workers here: a job left waiting in the queue stays there for the test to see.
layer(TestServices, { excludeTestServices: true })("dropping a workspace while a unit of it commits late", (it) => {
  it.effect(
    "a job queued by a unit that resolved the workspace before its row went, committed after the first sweep, is swept once the schema is gone",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const jobs = yield* JobQueue
        const workspace = yield* freshWorkspace
        const holding = yield* Deferred.make<void>()
        const release = yield* Deferred.make<void>()
        // As a request's unit does: a row written in the schema (its lock holds DROP SCHEMA back), a job queued, not yet committed.
        const unit = yield* sql
          .withTransaction(
            Effect.gen(function* () {
              yield* sql`INSERT INTO ${sql(workspace.table("completed_runs"))} (id, kind, name)
                VALUES (${crypto.randomUUID()}, 'job', 'late')`
              yield* jobs.queue.offer({ workspace, job: "crm/follow-up", payload: {}, actor: null })
              yield* Deferred.succeed(holding, undefined)
              yield* Deferred.await(release)
            })
          )
          .pipe(Effect.orDie, Effect.forkChild)
        yield* Deferred.await(holding)

        const drop = yield* Effect.forkChild((yield* Workspaces).drop(workspace))
        yield* eventually("DROP SCHEMA waits for the unit", dropWaits(workspace.schema), "30 seconds")
        yield* Deferred.succeed(release, undefined)
        yield* Fiber.join(unit)
        yield* Fiber.join(drop)

        const queued = yield* queuedIn(queueName((yield* AppConfig).queuePrefix, "jobs"), workspace)
        expect(queued.filter((element) => !element.completed)).toEqual([])
      }),
    60_000
  )
})
