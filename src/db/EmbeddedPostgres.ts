import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Data, Effect, Predicate } from "effect"
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import type { Scope } from "effect"

export class EmbeddedPostgresError extends Data.TaggedError("EmbeddedPostgresError")<{
  readonly message: string
  readonly cause?: unknown
}> {}

export interface EmbeddedPostgres {
  readonly host: string
  readonly port: number
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return Predicate.hasProperty(error, "code") && error.code === "EPERM"
  }
}

const lockFileOf = (dataDir: string) => join(dataDir, "service.lock")

/** The live process that holds the data directory (the embedded server), if any: a stale lock names none. */
const holderOf = (dataDir: string): number | undefined => {
  try {
    const holder = Number(readFileSync(lockFileOf(dataDir), "utf8"))
    return Number.isInteger(holder) && holder > 0 && isAlive(holder) ? holder : undefined
  } catch {
    return undefined
  }
}

/**
 * PGlite has no lock of its own: two processes opening one data directory
 * corrupt it (and so do two opens in one process). A pid file guards it; a
 * stale one, whose process is gone, is taken over.
 */
const lockDataDir = (dataDir: string) => {
  const lockFile = lockFileOf(dataDir)
  return Effect.acquireRelease(
    Effect.suspend(() => {
      try {
        writeFileSync(lockFile, String(process.pid), { flag: "wx" })
        return Effect.void
      } catch {
        const holder = Number(readFileSync(lockFile, "utf8"))
        if (Number.isInteger(holder) && isAlive(holder)) {
          return Effect.fail(
            new EmbeddedPostgresError({
              message: `the embedded database in ${dataDir} is in use by process ${holder}: stop it, or set DATABASE_URL`
            })
          )
        }
        writeFileSync(lockFile, String(process.pid))
        return Effect.void
      }
    }),
    () => Effect.sync(() => rmSync(lockFile, { force: true }))
  )
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
    yield* lockDataDir(dataDir)
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

export const EmbeddedPostgres = { start, holderOf }
