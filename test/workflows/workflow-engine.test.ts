import { expect, layer } from "@effect/vitest"
import { SqlClient } from "effect/sql"
import { Effect, Exit, Layer, Option } from "effect"
import { AppConfig } from "../../src/config/AppConfig"
import type { Actor } from "../../src/api/Actor"
import { withActor } from "../../src/context/Frames"
import { Conflict } from "../../src/api/errors"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { queueName } from "../../src/queue/DurableQueues"
import { Records } from "../../src/records/Records"
import { queueTable } from "../../src/tenancy/migrations/durableQueue"
import type { Workspace } from "../../src/api/Workspace"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { eventually } from "../broadcast/streamHelpers"
import { freshUserActor, queuedIn } from "../support/queue"
import { freshWorkspace, testApp, TestServices, testServices, uniqueSuffix } from "../support/TestApp"

const deal = "crm/deal"
const workflowId = "crm/note-archived-deal"

/** This workspace's workflow runs in the queues of `prefix`. */
const queuedRuns = (workspace: Workspace, prefix: string) => queuedIn(queueName(prefix, "workflows"), workspace)

const activities = (workspace: Workspace) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ id: string; subject: string }>`SELECT id, values->>'subject' AS subject
      FROM ${sql(workspace.table("records"))} WHERE business_object = 'crm/activity'`
  }).pipe(Effect.orDie)

const auditRowsOf = (workspace: Workspace, id: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{
      actor: unknown
      cause: unknown
    }>`SELECT actor, cause FROM ${sql(workspace.table("audit_entries"))}
      WHERE business_object_id = ${id}`
  }).pipe(Effect.orDie)

/** Creates a deal and archives it, as `actor`, in two units; the second may fail after archiving. */
const archiveADeal = (workspace: Workspace, actor: Actor, failAfterArchive = false) =>
  Effect.gen(function* () {
    const units = yield* UnitOfWork
    const records = yield* Records
    const created = yield* units.run(workspace, records.create(deal, { title: "Winding down" }))
    const archived = units.run(
      workspace,
      records
        .archive(deal, created.id)
        .pipe(
          Effect.tap(() =>
            failAfterArchive ? Effect.fail(new Conflict({ message: "fails after archiving" })) : Effect.void
          )
        )
    )
    return { id: created.id, exit: yield* Effect.exit(archived) }
  }).pipe(withActor(actor))

layer(TestServices, { excludeTestServices: true })("the workflow engine", (it) => {
  it.effect("gets nothing from a rolled-back unit, and one durable run per committed triggering event", () =>
    Effect.gen(function* () {
      const prefix = (yield* AppConfig).queuePrefix
      const workspace = yield* freshWorkspace
      const actor = yield* freshUserActor(workspace)
      const rolledBack = yield* archiveADeal(workspace, actor, true)
      expect(Exit.isFailure(rolledBack.exit)).toBe(true)
      expect(yield* queuedRuns(workspace, prefix)).toEqual([])
      const committed = yield* archiveADeal(workspace, actor)
      expect(Exit.isSuccess(committed.exit)).toBe(true)
      expect(yield* queuedRuns(workspace, prefix)).toEqual([
        { id: expect.any(String), completed: false, attempts: 0, lastFailure: null }
      ])
    })
  )

  it.effect(
    "a run survives the instance stopping between COMMIT and the run, and runs exactly once even when delivered twice",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const workspace = yield* freshWorkspace
        const actor = yield* freshUserActor(workspace)
        const prefix = `test-${uniqueSuffix()}`

        // Instance 1 commits the triggering change and stops before any engine runs it.
        const { id: dealId } = yield* Effect.scoped(
          Effect.flatMap(Layer.build(testServices({ queuePrefix: prefix })), (context) =>
            Effect.provide(archiveADeal(workspace, actor), context)
          )
        )
        const [run] = yield* queuedRuns(workspace, prefix)
        expect(run).toEqual({ id: expect.any(String), completed: false, attempts: 0, lastFailure: null })
        expect(yield* activities(workspace)).toEqual([])

        // Instance 2 starts (with its workers) and runs it.
        yield* Effect.scoped(
          Effect.gen(function* () {
            yield* Layer.build(testApp({ queuePrefix: prefix }))
            yield* eventually(
              "the run is done",
              Effect.map(queuedRuns(workspace, prefix), (rows) => rows[0]?.completed === true)
            )
            const [note] = yield* activities(workspace)
            expect(note?.subject).toBe('Deal "Winding down" was archived')
            expect(yield* auditRowsOf(workspace, note!.id)).toEqual([
              {
                actor: { kind: "system", name: `workflow:${workflowId}` },
                cause: { kind: "event", businessObject: deal, businessObjectId: dealId, operation: "archived" }
              }
            ])

            // The queue loses its "done" mark (a crash right after the run's COMMIT): the run is handed out again...
            yield* sql`UPDATE ${sql(queueTable)} SET state = 'pending' WHERE id = ${run!.id}`
            yield* eventually(
              "delivered again",
              Effect.map(queuedRuns(workspace, prefix), (rows) => rows[0]?.attempts === 2)
            )
            yield* eventually(
              "and done again",
              Effect.map(queuedRuns(workspace, prefix), (rows) => rows[0]?.completed === true)
            )
            // ...and finds its claim committed: nothing is written twice.
            expect((yield* activities(workspace)).map((a) => a.id)).toEqual([note!.id])
            const claims =
              yield* sql`SELECT kind, name FROM ${sql(workspace.table("completed_runs"))} WHERE id = ${run!.id}`
            expect(claims).toEqual([{ kind: "workflow", name: workflowId }])
          })
        )
      }),
    { timeout: 30_000 }
  )

  it.effect("a workflow started outside the engine has no actor: its writes fail and roll back", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const registry = yield* PluginRegistry
      const units = yield* UnitOfWork
      const records = yield* Records
      const workflow = Option.getOrThrow(registry.workflow(workflowId))
      const exit = yield* Effect.exit(
        units.run(
          workspace,
          records.runPlugin(
            workflow.declaration.run({
              operation: "archived",
              businessObject: deal,
              businessObjectId: crypto.randomUUID(),
              before: { title: "Somebody's" },
              after: { title: "Somebody's" }
            })
          )
        )
      )
      expect(Exit.isFailure(exit) ? Option.map(Exit.getCause(exit), String) : Option.none()).toEqual(
        Option.some(expect.stringContaining("no actor in context while auditing created of crm/activity"))
      )
      expect(yield* activities(workspace)).toEqual([])
      const sql = yield* SqlClient.SqlClient
      expect(yield* sql`SELECT 1 FROM ${sql(workspace.table("audit_entries"))}`).toEqual([])
    })
  )
})
