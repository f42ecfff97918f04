import * as Reactivity from "effect/reactivity/Reactivity"
import { SqlClient, Statement } from "effect/sql"
import type { Acquirer, Connection } from "effect/sql/SqlConnection"
import { ConnectionError, SqlError, UnknownError } from "effect/sql/SqlError"
import { PgClient } from "@effect/sql-pg"
import { Context, Duration, Effect, Fiber, Layer, Option, Predicate, type Redacted, String as Str } from "effect"
import type { AppConfigShape } from "../config/AppConfig"
import { AppConfig } from "../config/AppConfig"
import { parseLsn } from "../api/CommitPosition"
import { acquireTimeoutMessage } from "./DatabaseFault"
import { EmbeddedPostgres } from "./EmbeddedPostgres"
import { jsonReadingTypes } from "./jsonTypes"
import { CommitRecorder } from "./ReadPlacement"
import { makeReplicaTracker, type ReplicaHealthShape } from "./ReplicaTracker"
import { routedAcquirer } from "./replicaRouting"

/** Which database the service runs on. */
export interface DatabaseInfoShape {
  readonly kind: "postgres" | "embedded"
}

export class DatabaseInfo extends Context.Service<DatabaseInfo, DatabaseInfoShape>()("DatabaseInfo") {}

/**
 * The SQL client for reads outside a unit of work that a replica may serve
 * (records, lists, timelines, the feed, history, correlation): with
 * `DATABASE_READ_URL`, routed by the fiber's `ReadPlacement` to the replica
 * or to the primary read pool (`replicaRouting.ts`); without, the primary
 * read pool itself. Inside a transaction of the write client its statements
 * join the transaction.
 */
export class ReadSqlClient extends Context.Service<ReadSqlClient, SqlClient.SqlClient>()("ReadSqlClient") {}

/**
 * The SQL client for reads that must see the primary: credential and
 * authorization checks (users, sessions, API keys, memberships, roles and
 * grants, workspaces) and presence's record states. A pool of its own, so
 * writes waiting on locks cannot drain the connections reads and sign-in
 * checks need. Inside a transaction of the write client its statements join
 * the transaction.
 */
export class PrimaryReadSqlClient extends Context.Service<PrimaryReadSqlClient, SqlClient.SqlClient>()(
  "PrimaryReadSqlClient"
) {}

/** The replica's state for `GET /api/health`; none without `DATABASE_READ_URL`. */
export interface ReplicaStatusShape {
  readonly health: Effect.Effect<Option.Option<ReplicaHealthShape>>
}

export class ReplicaStatus extends Context.Service<ReplicaStatus, ReplicaStatusShape>()("ReplicaStatus") {}

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

/** One row's text column, as `SELECT <expr>::text AS lsn` returns it. */
const lsnOf = (rows: ReadonlyArray<unknown>): Option.Option<bigint> => {
  const row = rows[0]
  return Option.fromUndefinedOr(
    Predicate.hasProperty(row, "lsn") && typeof row.lsn === "string" ? parseLsn(row.lsn) : undefined
  )
}

/**
 * After COMMIT, on the same connection: the primary's WAL insert position,
 * at or past the end of the commit record just written (the insert position,
 * not the write position, so that it holds with `synchronous_commit = off`
 * too), kept for the request's answer (`CommitRecorder`). Asked only when a
 * replica is configured and a request keeps it. A failure here is no failure
 * of the commit: the answer then carries no position.
 */
const recordingCommit = (conn: Connection): Effect.Effect<void, SqlError> =>
  Effect.gen(function* () {
    yield* commit(conn)
    const recorder = yield* CommitRecorder
    if (!recorder.active) return
    yield* conn.execute("SELECT pg_current_wal_insert_lsn()::text AS lsn", [], undefined).pipe(
      Effect.map((rows) => Option.map(lsnOf(rows), recorder.record)),
      Effect.ignore
    )
  })

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
 *
 * With `DATABASE_READ_URL`, two more on the replica: a read pool of
 * `DATABASE_READ_POOL_SIZE` and one connection for its checks; the routed
 * reads (`ReadSqlClient`) then go there (docs/scale-out.md, "Read replicas").
 */
const postgresLive = (config: AppConfigShape, url: Redacted.Redacted) =>
  Layer.effectContext(
    Effect.gen(function* () {
      const transactionService = Context.Service<
        SqlClient.TransactionConnection,
        SqlClient.TransactionConnection.Service
      >(`service/db/TransactionConnection/${transactionServices++}`)
      const timeouts = { lock: config.databaseLockTimeout, statement: config.databaseStatementTimeout }
      const replicaUrl = config.databaseReadUrl
      const types = jsonReadingTypes()
      const poolOf = (
        role: string,
        maxConnections: number,
        timeouts: { lock: Duration.Duration; statement: Duration.Duration },
        on: Redacted.Redacted = url
      ) =>
        PgClient.make({
          url: on,
          maxConnections,
          connectTimeout: config.databaseAcquireTimeout,
          applicationName: `${config.databaseApplicationName}/${role}`,
          startupParameters: sessionTimeouts(timeouts),
          types,
          ...naming
        })
      /** The pool's connections, the wait for one bounded. */
      const acquirerOf = (pool: PgClient.PgClient, role: string, maxConnections: number): Acquirer => {
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
        return Effect.flatMap(claim, (before) => (before < maxConnections ? pool.reserve : bounded))
      }
      const clientOf = (
        pool: PgClient.PgClient,
        acquire: Acquirer,
        options: { readonly transactionAcquirer?: Acquirer; readonly commit?: typeof commit } = {}
      ) =>
        SqlClient.make({
          acquirer: acquire,
          transactionAcquirer: options.transactionAcquirer ?? acquire,
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
          commit: options.commit ?? commit,
          releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`
        })
      const writePool = yield* poolOf("write", config.databasePoolSize, timeouts)
      const writeSql = yield* clientOf(writePool, acquirerOf(writePool, "write", config.databasePoolSize), {
        commit: Option.isSome(replicaUrl) ? recordingCommit : commit
      })
      const readPool = yield* poolOf("read", config.databaseReadPoolSize, timeouts)
      const readAcquirer = acquirerOf(readPool, "read", config.databaseReadPoolSize)
      const readSql = yield* clientOf(readPool, readAcquirer)
      const health = yield* poolOf("health", 1, { lock: probeBudget, statement: probeBudget })
      /** The replica's pools, its tracker and the routed read client over it and the primary read pool. */
      const replicaReads = (on: Redacted.Redacted) =>
        Effect.gen(function* () {
          const pool = yield* poolOf("replica", config.databaseReadPoolSize, timeouts, on)
          const checks = yield* poolOf("replica-health", 1, { lock: probeBudget, statement: probeBudget }, on)
          const tracker = yield* makeReplicaTracker({
            replica: Effect.map(checks`SELECT pg_last_wal_replay_lsn()::text AS lsn`, lsnOf),
            primary: Effect.flatMap(health`SELECT pg_current_wal_insert_lsn()::text AS lsn`, (rows) =>
              Option.match(lsnOf(rows), {
                onNone: () => Effect.die(new Error("pg_current_wal_insert_lsn() answered no position")),
                onSome: Effect.succeed
              })
            )
          })
          const routed = routedAcquirer({
            replica: acquirerOf(pool, "replica", config.databaseReadPoolSize),
            primary: readAcquirer,
            tracker
          })
          const sql = yield* clientOf(pool, routed, { transactionAcquirer: readAcquirer })
          return { sql, tracker } as const
        })
      const replica = Option.isSome(replicaUrl)
        ? Option.some(yield* replicaReads(replicaUrl.value))
        : Option.none<Effect.Success<ReturnType<typeof replicaReads>>>()
      const pgClient: PgClient.PgClient = Object.assign(writeSql, {
        [PgClient.TypeId]: PgClient.TypeId,
        config: writePool.config,
        json: writePool.json,
        listen: writePool.listen,
        notify: writePool.notify
      })
      return Context.make(PgClient.PgClient, pgClient).pipe(
        Context.add(SqlClient.SqlClient, writeSql),
        Context.add(PrimaryReadSqlClient, readSql),
        Context.add(ReadSqlClient, Option.match(replica, { onNone: () => readSql, onSome: (r) => r.sql })),
        Context.add(ReplicaStatus, {
          health: Option.match(replica, {
            onNone: () => Effect.succeedNone,
            onSome: (r) => Effect.sync(() => Option.some(r.tracker.health()))
          })
        }),
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
      types: jsonReadingTypes(),
      ...naming
    })
    const shared = Layer.effectContext(
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        return Context.make(ReadSqlClient, sql).pipe(
          Context.add(PrimaryReadSqlClient, sql),
          Context.add(ReplicaStatus, { health: Effect.succeedNone }),
          Context.add(DatabaseProbe, probeOf(sql)),
          Context.add(DatabaseInfo, { kind: "embedded" })
        )
      })
    )
    return Layer.provideMerge(shared, client)
  })
)
