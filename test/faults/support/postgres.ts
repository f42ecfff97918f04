import { type Duration, Effect } from "effect"
import type { Scope } from "effect"
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { freePort } from "../../support/freePort"
import { childrenOf, isAlive, onProcessExit, runOk, signalPid, waitUntil } from "./processes"

/** The highest PostgreSQL version installed under /usr/lib/postgresql. */
export const binDir = () => {
  const versions = readdirSync("/usr/lib/postgresql")
    .filter((v) => existsSync(`/usr/lib/postgresql/${v}/bin/pg_ctl`))
    .sort((a, b) => Number(b) - Number(a))
  const version = versions[0]
  if (version === undefined)
    throw new Error("no PostgreSQL server under /usr/lib/postgresql (apt-get install postgresql)")
  return `/usr/lib/postgresql/${version}/bin`
}

/** The uid and gid of the `postgres` user, from /etc/passwd. */
export const postgresUser = () => {
  const line = readFileSync("/etc/passwd", "utf8")
    .split("\n")
    .find((l) => l.startsWith("postgres:"))
  const [, , uid, gid] = line?.split(":") ?? []
  if (uid === undefined || gid === undefined)
    throw new Error("running as root needs a `postgres` user (apt-get install postgresql)")
  return { uid: Number(uid), gid: Number(gid) }
}

export const isRoot = () => process.getuid?.() === 0

/** initdb and pg_ctl refuse root: run them as `postgres` then. */
export const asPostgres = (binary: string, args: ReadonlyArray<string>) =>
  isRoot() ? (["runuser", ["-u", "postgres", "--", binary, ...args]] as const) : ([binary, args] as const)

export interface TestPostgres {
  readonly port: number
  /** `postgres://postgres@127.0.0.1:<port>/<database>` */
  readonly url: (database: string) => string
  /** Runs SQL with psql on `database` (a fresh connection each time); its output unaligned, tuples only. */
  readonly psql: (sql: string, database?: string, timeout?: Duration.Input) => Effect.Effect<string, Error>
  /** `pg_ctl restart -m fast`: every connection is cut, the server is back when this returns. */
  readonly restartFast: Effect.Effect<void, Error>
  /** SIGSTOP to the postmaster and all its children; returns what `thaw` must wake. */
  readonly freeze: Effect.Effect<ReadonlyArray<number>>
  readonly thaw: (pids: ReadonlyArray<number>) => Effect.Effect<void>
  /** The postmaster's pid (from postmaster.pid). */
  readonly postmasterPid: Effect.Effect<number, Error>
}

/** The pid in a data directory's postmaster.pid; undefined when it is not there (not started, or stopped). */
export const postmasterPidIn = (data: string): number | undefined => {
  try {
    const pid = Number(readFileSync(join(data, "postmaster.pid"), "utf8").split("\n")[0])
    return Number.isInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/** SIGKILL to a postmaster and its children, if it is still there. */
export const killPostmaster = (pid: number) => {
  if (!isAlive(pid)) return
  for (const child of childrenOf(pid)) signalPid(child, "SIGKILL")
  signalPid(pid, "SIGKILL")
}

/**
 * `pg_ctl start -o` for a server of the test's own: loopback only, its socket in its data directory, no fsync;
 * `settings` (`name=value`) on top.
 */
export const serverOptions = (port: number, data: string, settings: ReadonlyArray<string> = []) =>
  [
    `-p ${port} -k ${data} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`,
    ...settings.map((s) => `-c ${s}`)
  ].join(" ")

/** A fresh directory under /tmp for a server of the test's own (the postgres user's, as root), removed with the scope. */
export const serverDirectory = (prefix: string) =>
  Effect.acquireRelease(
    Effect.sync(() => {
      const dir = mkdtempSync(prefix)
      if (isRoot()) {
        const { gid, uid } = postgresUser()
        chownSync(dir, uid, gid)
      }
      return dir
    }),
    (dir) => Effect.sync(() => rmSync(dir, { recursive: true, force: true }))
  )

/**
 * A throw-away PostgreSQL cluster on a free loopback port, its data under
 * /tmp. When the scope closes (also after a failure) it is woken if frozen,
 * stopped by its own pid, and its directory removed. Never touches the
 * machine's own server. `settings` (`name=value`) are server settings on top of `serverOptions`'.
 */
export const startPostgres = (
  databases: ReadonlyArray<string>,
  settings: ReadonlyArray<string> = []
): Effect.Effect<TestPostgres, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const bin = binDir()
    const port = yield* freePort
    const root = yield* serverDirectory("/tmp/faultsuite-pg-")
    const data = join(root, "data")
    const log = join(root, "postgres.log")
    const frozen = new Set<number>()

    const pgCtl = (args: ReadonlyArray<string>, timeout: Duration.Input = "60 seconds") => {
      const [command, full] = asPostgres(`${bin}/pg_ctl`, args)
      return runOk(command, full, timeout)
    }
    const postmasterPid = Effect.suspend(() => {
      const pid = postmasterPidIn(data)
      return pid === undefined ? Effect.fail(new Error("postmaster.pid unreadable")) : Effect.succeed(pid)
    })

    // If the test process exits without its finalizers: wake, kill and remove this cluster.
    const unregister = onProcessExit(() => {
      for (const pid of frozen) signalPid(pid, "SIGCONT")
      const pid = postmasterPidIn(data)
      if (pid !== undefined) killPostmaster(pid)
      rmSync(root, { recursive: true, force: true })
    })
    yield* Effect.addFinalizer(() => Effect.sync(unregister))

    const [initCommand, initArgs] = asPostgres(`${bin}/initdb`, [
      "-D",
      data,
      "-A",
      "trust",
      "-U",
      "postgres",
      "--no-sync",
      "-E",
      "UTF8",
      "--locale=C"
    ])
    yield* runOk(initCommand, initArgs, "120 seconds")

    // Stop by our own pid: wake it if frozen, ask for an immediate stop, kill what is left.
    yield* Effect.acquireRelease(
      pgCtl(["-D", data, "-l", log, "-o", serverOptions(port, data, settings), "-w", "-t", "60", "start"]),
      () =>
        Effect.gen(function* () {
          for (const pid of frozen) signalPid(pid, "SIGCONT")
          const pid = yield* postmasterPid.pipe(Effect.option)
          yield* pgCtl(["-D", data, "-m", "immediate", "-w", "-t", "20", "stop"], "30 seconds").pipe(Effect.ignore)
          if (pid._tag === "Some") killPostmaster(pid.value)
        })
    )

    const psql = (sql: string, database = "postgres", timeout: Duration.Input = "20 seconds") =>
      Effect.map(
        runOk(
          "psql",
          [`postgres://postgres@127.0.0.1:${port}/${database}`, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
          timeout
        ),
        (result) => result.stdout.trim()
      )

    for (const database of databases) yield* psql(`CREATE DATABASE "${database}"`)

    return {
      port,
      url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
      psql,
      restartFast: Effect.gen(function* () {
        yield* pgCtl(["-D", data, "-l", log, "-m", "fast", "-w", "-t", "60", "restart"], "90 seconds")
        yield* waitUntil(
          "PostgreSQL accepts connections after the restart",
          Effect.map(psql("SELECT 1"), (out) => out === "1"),
          "30 seconds"
        )
      }),
      freeze: Effect.gen(function* () {
        const pid = yield* Effect.orDie(postmasterPid)
        const pids = [pid, ...childrenOf(pid)]
        for (const p of pids) {
          frozen.add(p)
          signalPid(p, "SIGSTOP")
        }
        return pids
      }),
      thaw: (pids) =>
        Effect.sync(() => {
          for (const p of pids) {
            signalPid(p, "SIGCONT")
            frozen.delete(p)
          }
        }),
      postmasterPid
    } satisfies TestPostgres
  })
