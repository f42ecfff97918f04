import * as Reactivity from "@effect/experimental/Reactivity"
import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Layer, Option, Redacted, String as Str } from "effect"
import type { AppConfigShape } from "../config/AppConfig"
import { AppConfig } from "../config/AppConfig"
import { EmbeddedPostgres } from "./EmbeddedPostgres"

/** Which database the service runs on. */
export interface DatabaseInfoShape {
  readonly kind: "postgres" | "embedded"
}

export class DatabaseInfo extends Context.Tag("DatabaseInfo")<DatabaseInfo, DatabaseInfoShape>() {}

/**
 * The SQL client for reads outside a unit of work (record and timeline reads,
 * credential checks): a pool of its own, so writes waiting on locks cannot
 * drain the connections reads and sign-in checks need. Inside a transaction
 * its statements join the transaction, like any client's.
 */
export class ReadSqlClient extends Context.Tag("ReadSqlClient")<ReadSqlClient, SqlClient.SqlClient>() {}

/** Whether PostgreSQL answers, asked on a connection of its own and within `budget`. */
export interface DatabaseProbeShape {
  readonly budget: Duration.Duration
  readonly answers: Effect.Effect<boolean>
}

export class DatabaseProbe extends Context.Tag("DatabaseProbe")<DatabaseProbe, DatabaseProbeShape>() {}

/** Health answers within 1 s: the database gets most of it, the HTTP path the rest. */
const probeBudget = Duration.millis(750)

/**
 * `SELECT 1` within the budget. Disconnected, so the answer never waits for
 * the interrupted query's cancellation (which itself needs the database).
 */
const probeOf = (sql: SqlClient.SqlClient): DatabaseProbeShape => ({
  budget: probeBudget,
  answers: sql`SELECT 1`.pipe(
    Effect.as(true),
    Effect.orElseSucceed(() => false),
    Effect.disconnect,
    Effect.timeoutTo({ duration: probeBudget, onTimeout: () => false, onSuccess: (up) => up })
  )
})

/**
 * camelCase in TypeScript, snake_case in SQL. JSON values are left as they are:
 * record values and audit rows are frozen wire JSON and must not be renamed.
 */
const naming = {
  transformQueryNames: Str.camelToSnake,
  transformResultNames: Str.snakeToCamel,
  transformJson: false
} as const

/**
 * The URL with `lock_timeout` and `statement_timeout` as connection options:
 * the driver sends them when it opens a connection, so they hold for every
 * statement on it without a SET per transaction.
 */
const withSessionTimeouts = (
  url: Redacted.Redacted,
  timeouts: { lock: Duration.Duration; statement: Duration.Duration }
) => {
  const parsed = new URL(Redacted.value(url))
  parsed.searchParams.set("lock_timeout", `${Duration.toMillis(timeouts.lock)}`)
  parsed.searchParams.set("statement_timeout", `${Duration.toMillis(timeouts.statement)}`)
  return Redacted.make(parsed.toString())
}

/**
 * A real PostgreSQL: three pools. Writes (units of work, sign-in, migrations)
 * on `DATABASE_POOL_SIZE` connections; reads on `DATABASE_READ_POOL_SIZE`;
 * the health probe on one. Every wait is bounded: for a lock, by
 * `lock_timeout`; for a statement, by `statement_timeout`; for a connection,
 * by the acquire timeout.
 */
const postgresLive = (config: AppConfigShape, url: Redacted.Redacted) =>
  Layer.scopedContext(
    Effect.gen(function* () {
      const pool = (
        role: string,
        maxConnections: number,
        timeouts: { lock: Duration.Duration; statement: Duration.Duration }
      ) =>
        PgClient.make({
          url: withSessionTimeouts(url, timeouts),
          maxConnections,
          connectTimeout: config.databaseAcquireTimeout,
          applicationName: `${config.databaseApplicationName}/${role}`,
          ...naming
        })
      const timeouts = { lock: config.databaseLockTimeout, statement: config.databaseStatementTimeout }
      const write = yield* pool("write", config.databasePoolSize, timeouts)
      const read = yield* pool("read", config.databaseReadPoolSize, timeouts)
      const health = yield* pool("health", 1, { lock: probeBudget, statement: probeBudget })
      return Context.make(PgClient.PgClient, write).pipe(
        Context.add(SqlClient.SqlClient, write),
        Context.add(ReadSqlClient, read),
        Context.add(DatabaseProbe, probeOf(health)),
        Context.add(DatabaseInfo, { kind: "postgres" })
      )
    })
  ).pipe(Layer.provide(Reactivity.layer))

/**
 * The SQL clients: `@effect/sql-pg` against `DATABASE_URL`, or against the
 * embedded PGlite served on a loopback socket when there is none. The
 * embedded server runs one backend whose open transaction blocks every other
 * connection, so there the pools collapse into one client of one connection,
 * shared by writes, reads and the health probe.
 */
export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl)) return postgresLive(config, config.databaseUrl.value)
    const embedded = yield* EmbeddedPostgres.start(config.dataDir)
    yield* Effect.logWarning("database: embedded PGlite, single connection").pipe(
      Effect.annotateLogs({ dataDir: config.dataDir, port: embedded.port })
    )
    const client = PgClient.layer({
      host: embedded.host,
      port: embedded.port,
      database: "postgres",
      username: "postgres",
      maxConnections: 1,
      ...naming
    })
    const shared = Layer.effectContext(
      Effect.map(SqlClient.SqlClient, (sql) =>
        Context.make(ReadSqlClient, sql).pipe(
          Context.add(DatabaseProbe, probeOf(sql)),
          Context.add(DatabaseInfo, { kind: "embedded" })
        )
      )
    )
    return Layer.provideMerge(shared, client)
  })
)
