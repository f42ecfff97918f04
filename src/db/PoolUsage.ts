import { SqlClient, SqlSchema } from "effect/sql"
import { Effect, Metric, Option, Schema } from "effect"
import { AppConfig } from "../config/AppConfig"
import { databaseConnections, databasePoolMax } from "../metrics/ServiceMetrics"

const ConnectionRow = Schema.Struct({ pool: Schema.String, state: Schema.String, n: Schema.NumberFromString })

const pools = ["write", "read", "health"] as const

/**
 * Reads the deployment's PostgreSQL connections from `pg_stat_activity`
 * (named `DATABASE_APPLICATION_NAME/<pool>`, every instance of the
 * deployment together) by pool and state into `db_connections`, and each
 * pool's size on this instance into `db_pool_max_connections`. The pools of
 * `@effect/sql-pg` do not expose their counts; the server's view also shows
 * connections stuck `idle in transaction`. Nothing on the embedded database.
 */
export const samplePoolUsage = Effect.gen(function* () {
  const config = yield* AppConfig
  if (Option.isNone(config.databaseUrl)) return
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const rows = yield* SqlSchema.findAll({
    Request: Schema.Void,
    Result: ConnectionRow,
    execute: () => sql`SELECT split_part(application_name, '/', 2) AS pool, coalesce(state, 'unknown') AS state,
        count(*)::text AS n
      FROM pg_stat_activity
      WHERE application_name IN ${sql.in(pools.map((pool) => `${config.databaseApplicationName}/${pool}`))}
      GROUP BY 1, 2`
  })(undefined).pipe(Effect.orDie)
  for (const pool of pools) {
    for (const state of ["active", "idle", "idle in transaction"]) {
      const n = rows.find((row) => row.pool === pool && row.state === state)?.n ?? 0
      yield* Metric.update(databaseConnections.pipe(Metric.withAttributes({ pool, state })), n)
    }
  }
  const sizes = { write: config.databasePoolSize, read: config.databaseReadPoolSize, health: 1 }
  for (const pool of pools) yield* Metric.update(Metric.withAttributes(databasePoolMax, { pool }), sizes[pool])
})
