import { SqlClient, SqlSchema } from "effect/sql"
import { Effect, Metric, Schema } from "effect"
import { AppConfig } from "../config/AppConfig"
import { queueDepth } from "../metrics/ServiceMetrics"
import { queueTable } from "../tenancy/migrations/durableQueue"
import { queueName } from "./DurableQueues"

const DepthRow = Schema.Struct({ queue_name: Schema.String, failed: Schema.Boolean, n: Schema.NumberFromString })

/**
 * Reads how many elements this deployment's queues hold (not completed):
 * `waiting` (to run, or to be retried) and `failed` (attempts used up), into
 * the `queue_depth` gauge. One statement, for `/metrics`.
 */
export const sampleQueueDepth = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const config = yield* AppConfig
  const kinds = ["jobs", "workflows"] as const
  const names = kinds.map((kind) => queueName(config.queuePrefix, kind))
  const rows = yield* SqlSchema.findAll({
    Request: Schema.Void,
    Result: DepthRow,
    execute: () => sql`SELECT queue_name, state = 'failed' AS failed, count(*)::text AS n
      FROM ${sql(queueTable)} WHERE queue_name IN ${sql.in(names)} AND state <> 'completed'
      GROUP BY 1, 2`
  })(undefined).pipe(Effect.orDie)
  for (const [i, kind] of kinds.entries()) {
    for (const state of ["waiting", "failed"] as const) {
      const n = rows.find((row) => row.queue_name === names[i] && row.failed === (state === "failed"))?.n ?? 0
      yield* Metric.update(queueDepth.pipe(Metric.withAttributes({ queue: kind, state })), n)
    }
  }
})
