import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Option, String } from "effect"
import { AppConfig } from "../config/AppConfig"
import { EmbeddedPostgres } from "./EmbeddedPostgres"

/** Which database the service runs on. */
export interface DatabaseInfoShape {
  readonly kind: "postgres" | "embedded"
}

export class DatabaseInfo extends Context.Tag("DatabaseInfo")<DatabaseInfo, DatabaseInfoShape>() {}

/**
 * camelCase in TypeScript, snake_case in SQL. JSON values are left as they are:
 * record values and audit rows are frozen wire JSON and must not be renamed.
 */
const naming = {
  transformQueryNames: String.camelToSnake,
  transformResultNames: String.snakeToCamel,
  transformJson: false
} as const

/**
 * The SQL client: `@effect/sql-pg` against `DATABASE_URL`, or against the
 * embedded PGlite served on a loopback socket when there is none. The
 * embedded server runs one backend whose open transaction blocks every other
 * connection, so its pool holds a single connection.
 */
export const DatabaseLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl)) {
      return Layer.merge(
        PgClient.layer({ url: config.databaseUrl.value, maxConnections: config.databasePoolSize, ...naming }),
        Layer.succeed(DatabaseInfo, { kind: "postgres" })
      )
    }
    const embedded = yield* EmbeddedPostgres.start(config.dataDir)
    yield* Effect.logWarning("database: embedded PGlite, single connection").pipe(
      Effect.annotateLogs({ dataDir: config.dataDir, port: embedded.port })
    )
    return Layer.merge(
      PgClient.layer({
        host: embedded.host,
        port: embedded.port,
        database: "postgres",
        username: "postgres",
        maxConnections: 1,
        ...naming
      }),
      Layer.succeed(DatabaseInfo, { kind: "embedded" })
    )
  })
)
