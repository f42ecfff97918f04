import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient, Statement } from "effect/sql"
import type { Connection } from "effect/sql/SqlConnection"
import { ConnectionError, SqlError, UnknownError } from "effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Fiber, Layer, Option, Predicate, type Redacted, String as Str } from "effect"
import type { AppConfigShape } from "../config/AppConfig"
import { AppConfig } from "../config/AppConfig"
import { acquireTimeoutMessage } from "./DatabaseFault"
import { EmbeddedPostgres } from "./EmbeddedPostgres"

/** Which database the service runs on. */
export interface DatabaseInfoShape {
  readonly kind: "postgres" | "embedded"
}

export class DatabaseInfo extends Context.Service<DatabaseInfo, DatabaseInfoShape>()("DatabaseInfo") {}

/**
 * The SQL client for reads outside a unit of work (record and timeline reads,
 * credential checks): a pool of its own, so writes waiting on locks cannot
 * drain the connections reads and sign-in checks need. Inside a transaction
 * of the write client its statements join the transaction.
 */
export class ReadSqlClient extends Context.Service<ReadSqlClient, SqlClient.SqlClient>()("ReadSqlClient") {}

/** Whether PostgreSQL answers, asked on a connection of its own and within `budget`. */
export interface DatabaseProbeShape {
  readonly budget: Duration.Duration
  readonly answers: Effect.Effect<boolean>
}

export class DatabaseProbe extends Context.Service<DatabaseProbe, DatabaseProbeShape>()("DatabaseProbe") {}

/** Health answers within 1 s: the database gets most of it, the HTTP path the rest. */
const probeBudget = Duration.millis(750)

/**
 * `SELECT 1` within the budget. Run detached, so the answer never waits for
 * the interrupted query's cancellation (which itself needs the database).
 */
const probeOf = (sql: SqlClient.SqlClient): DatabaseProbeShape => ({
  budget: probeBudget,
  answers: Effect.gen(function* () {
    const query = yield* sql`SELECT 1`.pipe(
      Effect.as(true),
      Effect.orElseSucceed(() => false),
      Effect.forkDetach
    )
    return yield* Fiber.join(query).pipe(
      Effect.timeoutOrElse({
        duration: probeBudget,
        orElse: () => Effect.as(Effect.forkDetach(Fiber.interrupt(query)), false)
      })
    )
  })
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
 * `lock_timeout` and `statement_timeout` as startup parameters: the driver
 * sends them when it opens a connection, so they hold for every statement on
 * it without a SET per transaction. (The driver of `@effect/sql-pg` 4 ignores
 * them as URL parameters.)
 */
const sessionTimeouts = (timeouts: { lock: Duration.Duration; statement: Duration.Duration }) => ({
  lock_timeout: `${Duration.toMillis(timeouts.lock)}`,
  statement_timeout: `${Duration.toMillis(timeouts.statement)}`
})

/** PostgreSQL answers `ROLLBACK` to the COMMIT of an aborted transaction: that is no commit. */
const commit = (conn: Connection): Effect.Effect<void, SqlError> =>
  Effect.flatMap(conn.executeRaw("COMMIT", []), (result) =>
    Predicate.hasProperty(result, "command") && result.command === "ROLLBACK"
      ? Effect.fail(
          new SqlError({
            reason: new UnknownError({
              cause: new Error("COMMIT rolled back an aborted transaction"),
              message: "COMMIT rolled back an aborted transaction",
              operation: "commit"
            })
          })
        )
      : Effect.void
  )

/** One transaction service per deployment of the pools: the write and read clients share it. */
let transactionServices = 0

/**
 * A real PostgreSQL: three pools. Writes (units of work, sign-in, migrations)
 * on `DATABASE_POOL_SIZE` connections; reads on `DATABASE_READ_POOL_SIZE`;
 * the health probe on one. Every wait is bounded: for a lock, by
 * `lock_timeout`; for a statement, by `statement_timeout`; for a connection,
 * by the acquire timeout.
 *
 * The write and read clients are built on the pools of `@effect/sql-pg` with
 * `SqlClient.make` for two things its own client no longer does: waiting for
 * a free connection is bounded (`DATABASE_ACQUIRE_TIMEOUT_MS`, a
 * `ConnectionError` that `DatabaseFault` reads as a drained pool), and both
 * clients share one transaction service, so a read inside a write
 * transaction runs on the transaction's connection (each client of
 * `@effect/sql` 4 has a transaction service of its own).
 */
const postgresLive = (config: AppConfigShape, url: Redacted.Redacted) =>
  Layer.effectContext(
    Effect.gen(function* () {
      const transactionService = Context.Service<
        SqlClient.TransactionConnection,
        SqlClient.TransactionConnection.Service
      >(`service/db/TransactionConnection/${transactionServices++}`)
      const timeouts = { lock: config.databaseLockTimeout, statement: config.databaseStatementTimeout }
      const poolOf = (
        role: string,
        maxConnections: number,
        timeouts: { lock: Duration.Duration; statement: Duration.Duration }
      ) =>
        PgClient.make({
          url,
          maxConnections,
          connectTimeout: config.databaseAcquireTimeout,
          applicationName: `${config.databaseApplicationName}/${role}`,
          startupParameters: sessionTimeouts(timeouts),
          ...naming
        })
      const client = Effect.fnUntraced(function* (role: string, maxConnections: number) {
        const pool = yield* poolOf(role, maxConnections, timeouts)
        const bounded = pool.reserve.pipe(
          Effect.timeoutOrElse({
            duration: config.databaseAcquireTimeout,
            orElse: () =>
              Effect.fail(
                new SqlError({
                  reason: new ConnectionError({
                    cause: new Error(acquireTimeoutMessage),
                    message: `no ${role} connection became free within ${Duration.format(config.databaseAcquireTimeout)}`,
                    operation: "acquire"
                  })
                })
              )
          })
        )
        // Connections taken or asked for: with one free, the wait needs no timer (a timer per statement costs
        // more than the statement's own bookkeeping); with none, it is bounded.
        let claimed = 0
        const claim = Effect.acquireRelease(
          Effect.sync(() => claimed++),
          () =>
            Effect.sync(() => {
              claimed--
            })
        )
        const acquire = Effect.flatMap(claim, (before) => (before < maxConnections ? pool.reserve : bounded))
        const sql = yield* SqlClient.make({
          acquirer: acquire,
          transactionAcquirer: acquire,
          compiler: PgClient.makeCompiler(naming.transformQueryNames, naming.transformJson),
          transformRows: Statement.defaultTransforms(naming.transformResultNames, naming.transformJson).array,
          driver: pool.driver,
          spanAttributes: [
            ["db.system.name", "postgresql"],
            ["db.namespace", pool.config.database ?? pool.config.username ?? "postgres"],
            ["server.address", pool.config.host ?? "localhost"],
            ["server.port", pool.config.port ?? 5432]
          ],
          transactionService,
          prepareTransactionControls: true,
          commit,
          releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`
        })
        return { pool, sql }
      })
      const write = yield* client("write", config.databasePoolSize)
      const read = yield* client("read", config.databaseReadPoolSize)
      const health = yield* poolOf("health", 1, { lock: probeBudget, statement: probeBudget })
      const pgClient: PgClient.PgClient = Object.assign(write.sql, {
        [PgClient.TypeId]: PgClient.TypeId,
        config: write.pool.config,
        json: write.pool.json,
        listen: write.pool.listen,
        notify: write.pool.notify
      })
      return Context.make(PgClient.PgClient, pgClient).pipe(
        Context.add(SqlClient.SqlClient, write.sql),
        Context.add(ReadSqlClient, read.sql),
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
export const DatabaseLive = Layer.unwrap(
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
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return Context.make(ReadSqlClient, sql).pipe(
          Context.add(DatabaseProbe, probeOf(sql)),
          Context.add(DatabaseInfo, { kind: "embedded" })
        )
      })
    )
    return Layer.provideMerge(shared, client)
  })
)
