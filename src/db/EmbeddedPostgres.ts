import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Data, Effect } from "effect"
import { mkdirSync } from "node:fs"
import type { Scope } from "effect"

export class EmbeddedPostgresError extends Data.TaggedError("EmbeddedPostgresError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface EmbeddedPostgres {
  readonly host: string
  readonly port: number
}

/**
 * PGlite (PostgreSQL compiled to WebAssembly) in this process, with its data
 * in `dataDir`, served over the PostgreSQL wire protocol on a free loopback
 * port so the ordinary `pg` driver talks to it. Stopped with the scope.
 */
const start = (dataDir: string): Effect.Effect<EmbeddedPostgres, EmbeddedPostgresError, Scope.Scope> =>
  Effect.gen(function* () {
    yield* Effect.try({
      try: () => mkdirSync(dataDir, { recursive: true }),
      catch: (cause) => new EmbeddedPostgresError({ message: `cannot create data directory ${dataDir}`, cause })
    })
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => PGlite.create(dataDir),
        catch: (cause) =>
          new EmbeddedPostgresError({
            message: `cannot open the embedded database in ${dataDir} (is another process using it?)`,
            cause
          })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const host = "127.0.0.1"
    // Two socket slots: the pool's one connection, plus room for a reconnect
    // while the server has not yet noticed the old socket closing.
    const server = new PGLiteSocketServer({ db, host, port: 0, maxConnections: 2 })
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => server.start(),
        catch: (cause) => new EmbeddedPostgresError({ message: "cannot start the embedded database socket", cause })
      }),
      () => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    const port = Number(server.getServerConn().split(":").pop())
    return { host, port }
  })

export const EmbeddedPostgres = { start }
