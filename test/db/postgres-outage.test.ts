import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Option, Redacted, Schedule } from "effect"
import { execFile } from "node:child_process"
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { freePort } from "../support/freePort"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { baseUrl, freshWorkspace, testApp } from "../support/TestApp"
import { createRecord, healthOf, recordsOf, signedInMember, timelineOf } from "../support/api"
import { bodyAsSent, settled } from "../support/apiCaller"

/**
 * Faults that need a PostgreSQL of the test's own (docs: fault-testing
 * notes): a frozen server (SIGSTOP) and a restart. The cluster lives in a
 * temporary directory on a free loopback port and is stopped and removed
 * when the test ends, pass or fail.
 */

const run = promisify(execFile)
/** The highest PostgreSQL version's server binaries (not on PATH). */
const bin = (name: string) => {
  const versions = readdirSync("/usr/lib/postgresql").filter((entry) => /^\d+$/.test(entry))
  const highest = versions.sort((a, b) => Number(b) - Number(a))[0]
  if (highest === undefined) throw new Error("no PostgreSQL server binaries under /usr/lib/postgresql")
  return join("/usr/lib/postgresql", highest, "bin", name)
}

const asPostgres = (binary: string, ...args: ReadonlyArray<string>) =>
  Effect.promise(() => run("runuser", ["-u", "postgres", "--", bin(binary), ...args], { timeout: 60_000 }))

const serverOptions = (port: number, dir: string) => `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`

interface Cluster {
  readonly url: string
  readonly dir: string
  readonly data: string
  readonly port: number
}

/** A throw-away cluster, stopped (thawed first, if frozen) and deleted with the scope. */
const ownCluster = Effect.acquireRelease(
  Effect.gen(function* () {
    const dir = mkdtempSync(join(tmpdir(), "faults-pg-"))
    const { uid, gid } = yield* Effect.promise(() => run("id", ["-u", "postgres"])).pipe(
      Effect.zip(Effect.promise(() => run("id", ["-g", "postgres"]))),
      Effect.map(([u, g]) => ({ uid: Number(u.stdout.trim()), gid: Number(g.stdout.trim()) }))
    )
    chownSync(dir, uid, gid)
    const data = join(dir, "data")
    const port = yield* freePort
    yield* asPostgres("initdb", "-D", data, "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8", "--locale=C")
    // With a log file the server does not hold on to pg_ctl's output pipes (which would keep execFile waiting).
    yield* asPostgres(
      "pg_ctl",
      "-D",
      data,
      "-l",
      join(dir, "server.log"),
      "-o",
      serverOptions(port, dir),
      "-w",
      "start"
    )
    return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, dir, data, port }
  }),
  (cluster) =>
    signalServer(cluster, "SIGCONT").pipe(
      Effect.andThen(asPostgres("pg_ctl", "-D", cluster.data, "-m", "immediate", "-w", "stop")),
      Effect.ignore,
      Effect.andThen(Effect.sync(() => rmSync(cluster.dir, { recursive: true, force: true })))
    )
)

/** The postmaster and every process it forked. */
const serverPids = (cluster: Cluster) =>
  Effect.promise(async () => {
    const postmaster = Number(readFileSync(join(cluster.data, "postmaster.pid"), "utf8").split("\n")[0])
    const children = await run("pgrep", ["-P", String(postmaster)]).then(
      ({ stdout }) =>
        stdout
          .split("\n")
          .filter((line) => line.trim() !== "")
          .map(Number),
      () => []
    )
    return [postmaster, ...children]
  })

const signalServer = (cluster: Cluster, signal: "SIGSTOP" | "SIGCONT") =>
  Effect.flatMap(serverPids(cluster), (pids) =>
    Effect.sync(() => {
      for (const pid of pids) {
        try {
          process.kill(pid, signal)
        } catch {
          // a backend that exited meanwhile
        }
      }
    })
  )

const serviceOn = (cluster: Cluster) =>
  testApp({
    databaseUrl: Option.some(Redacted.make(cluster.url)),
    redisUrl: Option.none(),
    databaseApplicationName: "outage"
  })

describe("a PostgreSQL of the test's own", () => {
  it.live(
    "frozen (SIGSTOP): readiness answers 503 while it is still frozen, liveness 200; thawed, ready again",
    () =>
      Effect.gen(function* () {
        const cluster = yield* ownCluster
        yield* Effect.gen(function* () {
          const health = healthOf(yield* baseUrl)
          expect((yield* health.ready).status).toBe(200)
          yield* signalServer(cluster, "SIGSTOP")
          // Both complete while the server is frozen: the probe's budget does not wait for it.
          const ready = yield* health.ready
          expect(ready.status).toBe(503)
          expect(bodyAsSent(ready)).toMatchObject({
            _tag: "NotReady",
            draining: false,
            database: { status: "down", kind: "postgres" }
          })
          expect((yield* health.health).status).toBe(503)
          expect((yield* health.live).status).toBe(200)
          yield* signalServer(cluster, "SIGCONT")
          yield* health.ready.pipe(
            Effect.map((response) => response.status),
            Effect.repeat({ until: (status) => status === 200, schedule: Schedule.spaced("50 millis") })
          )
        }).pipe(Effect.scoped, Effect.provide(serviceOn(cluster)))
      }),
    120_000
  )

  it.live(
    "restarted under writes: every write answers 200 or 503, never 500, and the timeline holds each acknowledged one",
    () =>
      Effect.gen(function* () {
        const cluster = yield* ownCluster
        yield* Effect.gen(function* () {
          const workspace = yield* freshWorkspace
          const { client } = yield* signedInMember(yield* baseUrl, workspace)
          const record = yield* createRecord(client, "crm/company", { name: "Restarted", wonDeals: 0 })
          const statuses: Array<number> = []
          const underWay = yield* Deferred.make<void>()
          const unknown: Array<number> = []
          const writes = Effect.gen(function* () {
            for (let n = 1; n <= 60; n++) {
              const response = yield* settled(recordsOf(client, "crm/company").update(record.id, { wonDeals: n }))
              statuses.push(response.status)
              if (JSON.stringify(response.body).includes("outcome is unknown")) unknown.push(n)
              if (n === 5) yield* Deferred.succeed(underWay, undefined)
            }
          })
          const restart = asPostgres(
            "pg_ctl",
            "-D",
            cluster.data,
            "-l",
            join(cluster.dir, "server.log"),
            "-m",
            "fast",
            "-w",
            "restart",
            "-o",
            serverOptions(cluster.port, cluster.dir)
          )
          yield* Effect.all([writes, Effect.andThen(Deferred.await(underWay), restart)], { concurrency: 2 })

          expect(statuses.filter((status) => status !== 200 && status !== 503)).toEqual([])
          const acknowledged = statuses.filter((status) => status === 200).length
          const updates = (yield* timelineOf(client, "crm/company", record.id, { limit: 200 })).entries.filter(
            (entry) => entry.operation === "updated"
          ).length
          expect(updates).toBeGreaterThanOrEqual(acknowledged)
          expect(updates).toBeLessThanOrEqual(acknowledged + unknown.length)
        }).pipe(Effect.scoped, Effect.provide(serviceOn(cluster)))
      }),
    120_000
  )
})
