import { Effect } from "effect"
import type { Scope } from "effect"
import { rmSync } from "node:fs"
import { join } from "node:path"
import { freePort } from "../../support/freePort"
import { asPostgres, binDir, killPostmaster, postmasterPidIn, serverDirectory, serverOptions } from "./postgres"
import type { TestPostgres } from "./postgres"
import { onProcessExit, runOk, waitUntil } from "./processes"

export interface TestReplica {
  readonly port: number
  /** `postgres://postgres@127.0.0.1:<port>/<database>` */
  readonly url: (database: string) => string
  /** `pg_ctl stop -m immediate`: the replica is gone (connections cut, port closed) until `start`. */
  readonly stop: Effect.Effect<void, Error>
  /** Starts it again on the same port; back when it accepts connections. */
  readonly start: Effect.Effect<void, Error>
  /** Its last replayed WAL position, as PostgreSQL writes it. */
  readonly replayLsn: Effect.Effect<string, Error>
  /** Stops applying the primary's WAL (it still receives it): every write from now on is missing there. */
  readonly pauseReplay: Effect.Effect<void, Error>
  readonly resumeReplay: Effect.Effect<void, Error>
}

/**
 * A streaming replica of `primary` (`pg_basebackup -R`: a base backup that
 * starts as a hot standby following the primary), on a free loopback port,
 * its data under /tmp. When the scope closes (also after a failure) it is
 * stopped by its own pid and its directory removed.
 */
export const startReplica = (primary: TestPostgres): Effect.Effect<TestReplica, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const bin = binDir()
    const port = yield* freePort
    const root = yield* serverDirectory("/tmp/faultsuite-replica-")
    const data = join(root, "data")
    const log = join(root, "postgres.log")
    const killByPid = () => {
      const pid = postmasterPidIn(data)
      if (pid !== undefined) killPostmaster(pid)
    }
    const unregister = onProcessExit(() => {
      killByPid()
      rmSync(root, { recursive: true, force: true })
    })
    yield* Effect.addFinalizer(() => Effect.sync(unregister))

    const [backupCommand, backupArgs] = asPostgres(`${bin}/pg_basebackup`, [
      "-h",
      "127.0.0.1",
      "-p",
      String(primary.port),
      "-U",
      "postgres",
      "-D",
      data,
      "-R",
      "-X",
      "stream",
      "-c",
      "fast",
      "--no-sync"
    ])
    yield* runOk(backupCommand, backupArgs, "120 seconds")

    const pgCtl = (args: ReadonlyArray<string>) => {
      const [command, full] = asPostgres(`${bin}/pg_ctl`, args)
      return runOk(command, full, "60 seconds")
    }
    const psql = (sql: string) =>
      Effect.map(
        runOk("psql", [`postgres://postgres@127.0.0.1:${port}/postgres`, "-XAtq", "-c", sql], "20 seconds"),
        (result) => result.stdout.trim()
      )
    const start = Effect.gen(function* () {
      yield* pgCtl(["-D", data, "-l", log, "-o", serverOptions(port, data), "-w", "-t", "60", "start"])
      yield* waitUntil(
        "the replica accepts connections and replays",
        Effect.map(psql("SELECT pg_is_in_recovery() AND pg_last_wal_replay_lsn() IS NOT NULL"), (out) => out === "t"),
        "30 seconds"
      )
    })
    const stop = pgCtl(["-D", data, "-m", "immediate", "-w", "-t", "20", "stop"]).pipe(
      Effect.ensuring(Effect.sync(killByPid)),
      Effect.asVoid
    )
    yield* Effect.acquireRelease(start, () => Effect.ignore(stop))

    return {
      port,
      url: (database) => `postgres://postgres@127.0.0.1:${port}/${database}`,
      stop,
      start,
      replayLsn: psql("SELECT pg_last_wal_replay_lsn()"),
      pauseReplay: Effect.asVoid(psql("SELECT pg_wal_replay_pause()")),
      resumeReplay: Effect.asVoid(psql("SELECT pg_wal_replay_resume()"))
    } satisfies TestReplica
  })
