import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { AppConfig } from "../config/AppConfig"
import { queueTable } from "../tenancy/migrations/durableQueue"
import { queueName } from "./DurableQueues"
import { fromJsonText } from "../json/fromJsonText"

const FailedRow = Schema.Struct({
  id: Schema.String,
  queue_name: Schema.String,
  element: fromJsonText(
    Schema.Struct({
      workspace: Schema.Struct({ slug: Schema.String }),
      job: Schema.optional(Schema.String),
      workflowId: Schema.optional(Schema.String)
    })
  ),
  attempts: Schema.Number,
  last_failure: Schema.NullOr(Schema.String),
  updated_at: Schema.Date
})

export interface FailedItem {
  readonly id: string
  readonly kind: "job" | "workflow"
  readonly name: string
  readonly workspace: string
  readonly attempts: number
  readonly lastFailure: string
  readonly failedAt: Date
}

/**
 * Jobs and workflow runs that used up their attempts. They stay in the queue
 * table (never silently dropped) until someone looks: listed by the admin CLI,
 * and `retry` gives one a fresh set of attempts.
 */
export class FailedWork extends Context.Service<FailedWork>()("FailedWork", {
  make: Effect.gen(function* () {
    const sql = (yield* SqlClient.SqlClient).withoutTransforms()
    const config = yield* AppConfig
    const queues = [queueName(config.queuePrefix, "jobs"), queueName(config.queuePrefix, "workflows")]

    // Attempts used up (or an element the queue cannot decode): Effect 4's queue marks them failed.
    const failed = sql`state = 'failed'`

    const list = SqlSchema.findAll({
      Request: Schema.Void,
      Result: FailedRow,
      execute: () => sql`SELECT id, queue_name, element, attempts, last_failure, updated_at FROM ${sql(queueTable)}
        WHERE queue_name IN ${sql.in(queues)} AND ${failed}
        ORDER BY updated_at`
    })(undefined).pipe(
      Effect.map((rows) =>
        rows.map(
          (row): FailedItem => ({
            id: row.id,
            kind: row.queue_name.endsWith(":jobs") ? "job" : "workflow",
            name: row.element.job ?? row.element.workflowId ?? "?",
            workspace: row.element.workspace.slug,
            attempts: row.attempts,
            lastFailure: row.last_failure ?? "",
            failedAt: row.updated_at
          })
        )
      ),
      Effect.orDie
    )

    /** Puts a failed item back in line with a fresh set of attempts; false if there is no such failed item. */
    const retry = (id: string) =>
      sql`UPDATE ${sql(queueTable)}
          SET state = 'pending', attempts = 0, last_failure = NULL, visible_at = NOW(), updated_at = NOW()
          WHERE id = ${id} AND queue_name IN ${sql.in(queues)} AND ${failed}
          RETURNING id`.pipe(
        Effect.map((rows) => rows.length === 1),
        Effect.orDie
      )

    return { list, retry } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
