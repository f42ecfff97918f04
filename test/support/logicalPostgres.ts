import { Context, Effect, Layer } from "effect"
import type { Scope } from "effect"
import { startPostgres } from "../faults/support/postgres"
import type { TestPostgres } from "../faults/support/postgres"

/** What logical decoding needs (the machine's PostgreSQL runs `wal_level=replica`). */
export const logicalSettings: ReadonlyArray<string> = [
  "wal_level=logical",
  "max_replication_slots=10",
  "max_wal_senders=10"
]

export interface LogicalPostgresShape {
  readonly postgres: TestPostgres
  /** `postgres://postgres@127.0.0.1:<port>/<database>` of its one database. */
  readonly url: string
  readonly database: string
}

/**
 * A private PostgreSQL with `wal_level=logical` on a free loopback port (the
 * Debian server binaries, found as the fault suite finds them), with one
 * database. Stopped by its own pid and its directory removed when the scope
 * closes (test/faults/support/postgres.ts). `settings` go on top, e.g.
 * `fsync=on` for a bench that must pay for its commits as a deployment does.
 */
export const startLogicalPostgres = (
  database = "app",
  settings: ReadonlyArray<string> = []
): Effect.Effect<LogicalPostgresShape, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const postgres = yield* startPostgres([database], [...logicalSettings, ...settings])
    const level = yield* postgres.psql("SHOW wal_level", database)
    if (level !== "logical") return yield* Effect.fail(new Error(`wal_level is ${level}, not logical`))
    return { postgres, url: postgres.url(database), database }
  })

/** One logical PostgreSQL per test file (each file runs in its own process): `layer(LogicalPostgres.layer)`. */
export class LogicalPostgres extends Context.Service<LogicalPostgres, LogicalPostgresShape>()("test/LogicalPostgres") {
  static readonly layer = Layer.effect(LogicalPostgres, startLogicalPostgres())
}
