/**
 * Feed benchmarks (docs/feed.md):
 *
 * `npm run bench:export`: 1,000,000 audit rows in a workspace it creates,
 * exported through the service's HTTP route (`GET /api/audit/feed`,
 * `Accept: application/x-ndjson`) by a streaming client that counts lines
 * and keeps nothing. Prints the export's rows/s next to the floor, a raw
 * `COPY (SELECT <the same JSON per row> ORDER BY position) TO STDOUT` by
 * psql in the same run, and the RSS growth of this process (server and
 * client) during the export, sampled every 50 ms (target < 64 MiB).
 *
 * `npm run bench:feed-writes`: what the feed position costs the writers, in
 * one run on a PostgreSQL of its own with `wal_level=logical`
 * (test/support/logicalPostgres.ts, fsync on): 32 concurrent writers of
 * distinct records in one workspace on the raw driver, each unit the
 * statements of a one-record update (lock the record, update it, one audit
 * INSERT, COMMIT) with the INSERT of no feed position (the floor), of lock
 * mode and of WAL mode (the service running in WAL mode, its positioner
 * positioning the rows), in rounds (`BENCH_WRITE_ROUNDS`, 3) of one series
 * per kind (`BENCH_WRITE_SECONDS`, 8 s); units/s, each against the floor
 * (target WAL >= 80 %); then, in a WAL series of its own with a reader
 * following the feed, the feed delay from COMMIT to the row seen with its
 * position, p50/p99 (target p99 <= 100 ms); then the service itself in WAL
 * mode for reference.
 *
 * `BENCH_PG_SETTINGS` (space-separated `name=value`) goes on top of the
 * writes bench's server settings, for a diagnosis run (e.g.
 * `shared_preload_libraries=pg_stat_statements`).
 *
 * Each rewrites its section of BENCHMARKS.md. The export's database:
 * DATABASE_URL, else TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/test. No Redis needed (in-process bus).
 */
import pg from "pg"
import { spawn } from "node:child_process"
import { cpus, loadavg } from "node:os"
import { HttpServer } from "effect/http"
import { NodeRuntime } from "@effect/platform-node"
import { SqlClient } from "effect/sql"
import { Duration, Effect, Layer, Option, Redacted, References } from "effect"
import type { Actor } from "../src/api/Actor"
import type { Workspace } from "../src/api/Workspace"
import { appLayer } from "../src/app/AppLayer"
import { ApiKeys } from "../src/auth/ApiKeys"
import { AppConfig } from "../src/config/AppConfig"
import { withActor } from "../src/context/Frames"
import { Records } from "../src/records/Records"
import { Workspaces } from "../src/tenancy/Workspaces"
import { feedMaxLimit } from "../src/api/Feed"
import { FeedMode } from "../src/feedPositions/FeedMode"
import { positionedChannel } from "../src/feedPositions/positionCommits"
import {
  ledgerInsertParameters,
  ledgerInsertText,
  walInsertParameters,
  walInsertText
} from "../src/unitOfWork/AuditStaging"
import type { StagedRow } from "../src/unitOfWork/AuditStaging"
import { UnitOfWork } from "../src/unitOfWork/UnitOfWork"
import { startLogicalPostgres } from "../test/support/logicalPostgres"
import { benchmarksFile, writeBenchmarkSection } from "./benchmarksFile"
import { prepared } from "./http/pg"
import type { CpuByRole } from "./processCpu"
import { addCpu, processCpu } from "./processCpu"

const databaseUrl =
  process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const mode = process.argv[2] === "writes" ? "writes" : "export"

const exportRows = Number(process.env.BENCH_EXPORT_ROWS ?? "1000000")
const chunk = 100_000
const rssTargetMiB = 64
const writes = {
  writers: 32,
  records: 20,
  seconds: Number(process.env.BENCH_WRITE_SECONDS ?? "8"),
  rounds: Number(process.env.BENCH_WRITE_ROUNDS ?? "3")
}

const int = (value: number) => Math.round(value).toLocaleString("en-US")
const mib = (bytes: number) => bytes / 1024 / 1024
const say = (line: string) => Effect.sync(() => console.log(line))
const redactedUrl = (url: string) => url.replace(/\/\/[^@/]*@/, "//")
const actor: Actor = { kind: "system", name: "seeder:bench" }
const company = "crm/company"

const config = AppConfig.make({
  databaseUrl: Option.some(Redacted.make(databaseUrl)),
  redisUrl: Option.none(),
  host: "127.0.0.1",
  port: 0,
  databasePoolSize: writes.writers + 2,
  // Loading a million rows runs past the service's 10 s statement budget.
  databaseStatementTimeout: Duration.minutes(30)
})

const BenchLive = appLayer(config).pipe(Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn")))

const environment = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const [version] = yield* sql<{ readonly version: string }>`SELECT split_part(version(), ' on ', 1) AS version`
  return {
    date: new Date().toISOString().slice(0, 10),
    postgres: version?.version ?? "PostgreSQL",
    machine: `${cpus().length} × ${cpus()[0]?.model.trim() ?? "CPU"} (load average ${loadavg()[0]?.toFixed(1) ?? "?"} at the start)`,
    node: process.version
  }
})

const benchWorkspace = (name: string) =>
  Effect.gen(function* () {
    const workspaces = yield* Workspaces
    return yield* Effect.acquireRelease(workspaces.create(`bench-${name}-${crypto.randomUUID().slice(0, 8)}`), (w) =>
      Effect.andThen(workspaces.drop(w), say(`[bench] dropped workspace ${w.slug}`))
    )
  })

// ---------------------------------------------------------------- export

/** `rows` audit rows over 1,000 records, positions after the workspace's own, the counter moved past them. */
const loadRows = (workspace: Workspace, rows: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const table = sql(workspace.table("audit_entries"))
    const started = performance.now()
    const [counter] = yield* sql<{ readonly position: string }>`
      SELECT position::text AS position FROM ${sql(workspace.table("feed_position"))}`
    const base = Number(counter?.position ?? "0")
    for (let from = 1; from <= rows; from += chunk) {
      const to = Math.min(rows, from + chunk - 1)
      yield* sql`INSERT INTO ${table}
          (id, at, actor, correlation_id, business_object, business_object_id, operation, changes, position)
        SELECT gen_random_uuid(), now(), ${JSON.stringify(actor)}::jsonb, gen_random_uuid(), 'crm/deal',
          'record-' || (i % 1000), 'updated',
          jsonb_build_object('title', jsonb_build_object('from', 'Deal ' || (i - 1), 'to', 'Deal ' || i),
            'amount', jsonb_build_object('from', '10.00', 'to', (i % 997)::text || '.50')),
          ${base}::bigint + i
        FROM generate_series(${from}::int, ${to}::int) AS i`
      yield* say(
        `[export] loaded ${int(to)} / ${int(rows)} rows (${((performance.now() - started) / 1000).toFixed(1)} s)`
      )
    }
    yield* sql`UPDATE ${sql(workspace.table("feed_position"))} SET position = position + ${rows}`
    yield* sql.unsafe(`VACUUM (ANALYZE) ${workspace.schema}.audit_entries`)
  })

/** The floor: PostgreSQL producing the same JSON text per row, in position order, through COPY, read by psql. */
const copyFloor = (workspace: Workspace) =>
  Effect.callback<{ readonly seconds: number; readonly bytes: number; readonly lines: number }, Error>((resume) => {
    const query = `COPY (SELECT (jsonb_build_object('id', e.id::text,
        'at', to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'actor', e.actor, 'correlationId', e.correlation_id::text, 'businessObject', e.business_object,
        'businessObjectId', e.business_object_id, 'operation', e.operation, 'cause', e.cause)
      || CASE WHEN e.record IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('record', e.record) END
      || CASE WHEN e.changes IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('changes', e.changes) END)::text
      FROM ${workspace.schema}.audit_entries AS e ORDER BY e.position) TO STDOUT`
    const started = performance.now()
    let bytes = 0
    let lines = 0
    // Counted as it streams, kept nowhere: the floor must not grow this process either.
    const psql = spawn("psql", [databaseUrl, "-qAtc", query], { stdio: ["ignore", "pipe", "inherit"] })
    psql.stdout.on("data", (part: Buffer) => {
      bytes += part.length
      for (const byte of part) if (byte === 10) lines += 1
    })
    psql.on("error", (error) => resume(Effect.fail(error)))
    psql.on("close", (code) =>
      resume(
        code === 0
          ? Effect.succeed({ seconds: (performance.now() - started) / 1000, bytes, lines })
          : Effect.fail(new Error(`psql exited with ${code}`))
      )
    )
  })

/** The HTTP export read by a client that counts lines and bytes and keeps nothing; RSS sampled meanwhile. */
const httpExport = (base: string, key: string) =>
  Effect.promise(async () => {
    if (global.gc) global.gc()
    const before = process.memoryUsage().rss
    let peak = before
    const sampler = setInterval(() => {
      peak = Math.max(peak, process.memoryUsage().rss)
    }, 50)
    const started = performance.now()
    const response = await fetch(`${base}/api/audit/feed`, {
      headers: { authorization: `Bearer ${key}`, accept: "application/x-ndjson" }
    })
    if (!response.ok || response.body === null) throw new Error(`export answered ${response.status}`)
    let bytes = 0
    let lines = 0
    for await (const part of response.body) {
      bytes += part.byteLength
      for (const byte of part) if (byte === 10) lines += 1
    }
    const seconds = (performance.now() - started) / 1000
    clearInterval(sampler)
    peak = Math.max(peak, process.memoryUsage().rss)
    return { seconds, bytes, lines, rssBefore: before, rssPeak: peak }
  })

const exportBench = Effect.gen(function* () {
  const env = yield* environment
  const workspace = yield* benchWorkspace("export")
  yield* say(`[export] workspace ${workspace.slug}: loading ${int(exportRows)} rows`)
  yield* loadRows(workspace, exportRows)
  const { key } = yield* (yield* ApiKeys).create(workspace, "bench", "admin")
  const { address } = yield* HttpServer.HttpServer
  if (address._tag === "UnixPathAddress") return yield* Effect.die(new Error("no TCP address"))
  const base = `http://127.0.0.1:${address.port}`
  const floor = yield* copyFloor(workspace)
  yield* say(
    `[export] COPY floor: ${int(floor.lines)} lines, ${mib(floor.bytes).toFixed(0)} MiB in ${floor.seconds.toFixed(2)} s`
  )
  const run = yield* httpExport(base, key)
  const rate = run.lines / run.seconds
  const floorRate = floor.lines / floor.seconds
  const growth = mib(run.rssPeak - run.rssBefore)
  yield* say(
    `[export] HTTP NDJSON: ${int(run.lines)} lines, ${mib(run.bytes).toFixed(0)} MiB in ${run.seconds.toFixed(2)} s: ` +
      `${int(rate)} rows/s (floor ${int(floorRate)} rows/s, ratio ${(floorRate / rate).toFixed(2)}); ` +
      `RSS ${mib(run.rssBefore).toFixed(0)} -> peak ${mib(run.rssPeak).toFixed(0)} MiB: growth ${growth.toFixed(1)} MiB ` +
      `(target < ${rssTargetMiB}: ${growth < rssTargetMiB ? "PASS" : "FAIL"})`
  )
  if (run.lines < exportRows)
    yield* Effect.die(new Error(`exported ${run.lines} lines, expected at least ${exportRows}`))
  writeBenchmarkSection(
    "Feed export",
    `## Feed export

\`npm run bench:export\` (bench/feed.ts), ${env.date}, ${env.postgres}, Node ${env.node}, ${env.machine}; the service
in-process on the test database (${redactedUrl(databaseUrl)}), no Redis.

${int(exportRows)} audit rows (\`updated\`, two changed fields each) in one workspace, exported through
\`GET /api/audit/feed\` with \`Accept: application/x-ndjson\` by a client that counts lines and keeps nothing
(${int(run.lines)} lines). The floor is PostgreSQL producing the same JSON
text per row in position order, \`COPY (SELECT ... ORDER BY position) TO STDOUT\` read by psql, in the same run.

| | rows/s | time | bytes |
|---|---|---|---|
| HTTP NDJSON export | ${int(rate)} | ${run.seconds.toFixed(2)} s | ${mib(run.bytes).toFixed(0)} MiB |
| floor: \`COPY ... TO STDOUT\` | ${int(floorRate)} | ${floor.seconds.toFixed(2)} s | ${mib(floor.bytes).toFixed(0)} MiB |
| ratio (floor / export) | ${(floorRate / rate).toFixed(2)} | | |

RSS of the process (server and client) during the export: ${mib(run.rssBefore).toFixed(0)} MiB before, peak
${mib(run.rssPeak).toFixed(0)} MiB, growth **${growth.toFixed(1)} MiB** (target < ${rssTargetMiB} MiB:
${growth < rssTargetMiB ? "PASS" : "FAIL"}). The export reads keyset batches of 2,000 rows, each one statement on
the read pool whose JSON PostgreSQL builds; the next batch is read only when the socket has taken the last one, so
memory is one batch whatever the total.
`
  )
  yield* say(`[bench] wrote the "Feed export" section of ${benchmarksFile}`)
})

// ---------------------------------------------------------------- writes

interface WriteRun {
  readonly units: number
  readonly seconds: number
  readonly p50: number
  readonly p99: number
  /** Every unit's latency, ascending. */
  readonly latencies: ReadonlyArray<number>
}

const writeRun = (latencies: ReadonlyArray<number>, seconds: number): WriteRun => {
  const sorted = [...latencies].sort((x, y) => x - y)
  return {
    units: sorted.length,
    seconds,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    latencies: sorted
  }
}

/** Several series of one kind as one: their units over their summed time, their latencies together. */
const together = (runs: ReadonlyArray<WriteRun>): WriteRun =>
  writeRun(
    runs.flatMap((run) => run.latencies),
    runs.reduce((seconds, run) => seconds + run.seconds, 0)
  )

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN

const rate = (run: WriteRun) => run.units / run.seconds

/** `writers` loops of one unit after another for `seconds`, each unit `unit(writer, i)`; units/s and latency. */
const concurrentUnits = (
  seconds: number,
  unit: (writer: number, i: number) => Promise<unknown>,
  writers: number = writes.writers
) =>
  Effect.promise(async () => {
    const latencies: Array<number> = []
    const started = performance.now()
    const deadline = started + seconds * 1_000
    await Promise.all(
      Array.from({ length: writers }, async (_, n) => {
        for (let i = 0; performance.now() < deadline; i++) {
          const t0 = performance.now()
          await unit(n, i)
          latencies.push(performance.now() - t0)
        }
      })
    )
    return writeRun(latencies, (performance.now() - started) / 1000)
  })

/** The audit INSERT a raw unit sends: none of the feed (the floor), the lock mode's, the WAL mode's. */
type FeedWay = "none" | "lock" | "wal"

/**
 * The floor's INSERT: the WAL mode's statement without its logical message, so
 * the same rows (salts, content hashes and all) without any feed position.
 */
const floorInsertText = (schema: string) => {
  const table = `"${schema}"."audit_entries"`
  return `INSERT INTO ${table}
      (id, actor, correlation_id, business_object, business_object_id, record_version, operation, cause, record, changes,
       parent_correlation_id, salt)
    SELECT r.id, r.actor, r.correlation_id, r.business_object, r.business_object_id, r.record_version, r.operation,
      r.cause, r.record, r.changes, r.parent_correlation_id, r.salt
    FROM jsonb_populate_recordset(NULL::${table}, $1::jsonb) WITH ORDINALITY AS r
    ORDER BY r.ordinality`
}

/**
 * 32 writers of distinct records in one workspace, on node-postgres (the raw
 * driver): each unit BEGIN, the record's locking read, its UPDATE, the audit
 * INSERT of `way` (the service's own text and parameters), COMMIT. Each unit's
 * correlation id and commit time go to `committed`.
 */
const rawUnits = (pool: pg.Pool, workspace: Workspace, ids: ReadonlyArray<string>, way: FeedWay) => {
  const records = `"${workspace.schema}"."records"`
  const lock = prepared(`SELECT version, values FROM ${records} WHERE business_object = $1 AND id = $2 FOR UPDATE`)
  const update = prepared(`UPDATE ${records} SET values = $1::jsonb, version = version + 1, updated_at = now()
    WHERE business_object = $2 AND id = $3 RETURNING version`)
  const insert = prepared(
    way === "lock"
      ? ledgerInsertText(workspace.schema, 1)
      : way === "wal"
        ? walInsertText(workspace.schema)
        : floorInsertText(workspace.schema)
  )
  const committed = new Map<string, number>()
  const unit = async (writer: number, i: number) => {
    const id = ids[writer] ?? ""
    const client = await pool.connect()
    try {
      await client.query("BEGIN")
      const current = (
        await client.query<{ version: string; values: Record<string, string> }>({ ...lock, values: [company, id] })
      ).rows[0]
      const name = `w${writer}.${i}`
      const updated = (
        await client.query<{ version: string }>({
          ...update,
          values: [JSON.stringify({ ...current?.values, name }), company, id]
        })
      ).rows[0]
      const row: StagedRow = {
        id: crypto.randomUUID(),
        actor,
        correlationId: crypto.randomUUID(),
        businessObject: company,
        businessObjectId: id,
        recordVersion: Number(updated?.version ?? 0),
        operation: "updated",
        cause: null,
        changes: { name: { from: current?.values.name ?? null, to: name } }
      }
      const values: ReadonlyArray<unknown> =
        way === "lock"
          ? ledgerInsertParameters([row], null)
          : way === "wal"
            ? walInsertParameters(workspace, [row], null)
            : [ledgerInsertParameters([row], null)[1]]
      await client.query({ ...insert, values: [...values] })
      await client.query("COMMIT")
      committed.set(row.correlationId, performance.now())
      client.release()
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined)
      client.release(error instanceof Error ? error : new Error(String(error)))
      throw error
    }
  }
  return { unit, committed }
}

/**
 * Follows the workspace's positioned rows (position > the last seen, from the
 * feed's end when it starts) on a connection of its own: a query after each
 * notice the positioner sends (LISTEN), and every 10 ms besides; notes when
 * each unit's row was first seen with its position.
 */
const followPositions = (url: string, workspace: Workspace) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new pg.Client({ connectionString: url, application_name: "bench/feed-delay" })
      await client.connect()
      const seen = new Map<string, number>()
      const head = await client.query<{ p: string }>(
        `SELECT coalesce(max(position), 0)::text AS p FROM "${workspace.schema}"."audit_entries"`
      )
      let last = head.rows[0]?.p ?? "0"
      let stopped = false
      let notified: (() => void) | undefined
      client.on("notification", () => notified?.())
      await client.query(`LISTEN ${positionedChannel}`)
      // Pages of the feed's largest (GET /api/audit/feed): a young table has no statistics, and a far larger
      // LIMIT had its planner read it whole and sort it at every query, a writer's share of the CPU.
      const text = `SELECT correlation_id::text AS c, position::text AS p FROM "${workspace.schema}"."audit_entries"
        WHERE position > $1::bigint ORDER BY position LIMIT ${feedMaxLimit}`
      const loop = (async () => {
        while (!stopped) {
          const { rows } = await client.query<{ c: string; p: string }>(text, [last])
          const at = performance.now()
          for (const row of rows) if (!seen.has(row.c)) seen.set(row.c, at)
          last = rows[rows.length - 1]?.p ?? last
          if (rows.length === 0)
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, 10)
              notified = () => {
                clearTimeout(timer)
                resolve()
              }
            })
        }
      })()
      return {
        seen,
        stop: async () => {
          stopped = true
          notified?.()
          await loop
          await client.end()
        }
      }
    }),
    (follower) => Effect.promise(() => follower.stop())
  )

/** Waits until the positioner has positioned every row of the workspace (its work stays out of the next series). */
const positionerCaughtUp = (pool: pg.Pool, workspace: Workspace) =>
  Effect.gen(function* () {
    const text = `SELECT count(*)::int AS n FROM "${workspace.schema}"."audit_entries" WHERE position IS NULL`
    const bound = Date.now() + 60_000
    while ((yield* Effect.promise(() => pool.query<{ n: number }>(text))).rows[0]?.n !== 0) {
      if (Date.now() > bound) return yield* Effect.die(new Error("rows still unpositioned 60 s after the series"))
      yield* Effect.sleep("20 millis")
    }
  })

/** The WAL mode's feed delay: for each unit, from its COMMIT returning to its row seen with a position. */
const feedDelays = (committed: ReadonlyMap<string, number>, seen: ReadonlyMap<string, number>) =>
  Effect.gen(function* () {
    const bound = Date.now() + 60_000
    while ([...committed.keys()].some((c) => !seen.has(c))) {
      if (Date.now() > bound) return yield* Effect.die(new Error("units still unpositioned 60 s after the series"))
      yield* Effect.sleep("20 millis")
    }
    return [...committed].map(([c, at]) => (seen.get(c) ?? at) - at).sort((x, y) => x - y)
  })

const writesBench = Effect.gen(function* () {
  // Judged before the bench's own 32 writers raise it: the 1-minute load average at the end is mostly theirs.
  const loadAtStart = loadavg()[0] ?? 0
  // A PostgreSQL of its own with logical decoding, committing as a deployment does (the fixture's fsync=off off).
  const postgres = yield* startLogicalPostgres("bench", [
    "fsync=on",
    "synchronous_commit=on",
    ...(process.env.BENCH_PG_SETTINGS ?? "").split(" ").filter((s) => s !== "")
  ])
  const writeConfig = AppConfig.make({
    databaseUrl: Option.some(Redacted.make(postgres.url)),
    redisUrl: Option.none(),
    host: "127.0.0.1",
    port: 0,
    databasePoolSize: writes.writers + 2,
    feedPositions: "wal"
  })
  const services = yield* Layer.build(
    appLayer(writeConfig).pipe(Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn")))
  )
  return yield* Effect.gen(function* () {
    const env = yield* environment
    const records = yield* Records
    const units = yield* UnitOfWork
    const feedMode = yield* FeedMode
    if (feedMode.mode !== "wal") return yield* Effect.die(new Error(`the service runs in ${feedMode.mode} mode`))
    const workspaceOf = (name: string) =>
      Effect.gen(function* () {
        const workspace = yield* benchWorkspace(name)
        const ids = yield* Effect.forEach(
          Array.from({ length: writes.writers }, (_, i) => i),
          (i) =>
            units.run(workspace, records.create(company, { name: `company ${i}` })).pipe(
              withActor(actor),
              Effect.map((r) => r.id)
            )
        )
        return { workspace, ids }
      })
    const pool = yield* Effect.acquireRelease(
      Effect.sync(
        () => new pg.Pool({ connectionString: postgres.url, max: writes.writers + 2, application_name: writersName })
      ),
      (p) => Effect.promise(() => p.end())
    )
    yield* say(
      `[writes] ${writes.writers} writers of distinct records in one workspace, ${writes.rounds} rounds of ${writes.seconds} s series, ${env.machine}`
    )
    const floorSpace = yield* workspaceOf("floor")
    const lockSpace = yield* workspaceOf("lock")
    const walSpace = yield* workspaceOf("wal")
    const floorUnits = rawUnits(pool, floorSpace.workspace, floorSpace.ids, "none")
    const lockUnits = rawUnits(pool, lockSpace.workspace, lockSpace.ids, "lock")
    const walUnits = rawUnits(pool, walSpace.workspace, walSpace.ids, "wal")
    // Each kind warms up alike (connections, plans, the positioner's first batches) before the rounds.
    for (const warm of [floorUnits, lockUnits, walUnits]) yield* concurrentUnits(2, warm.unit)
    yield* positionerCaughtUp(pool, walSpace.workspace)
    // Rounds of one series per kind, the kinds' order rotated each round: the machine's drift (other sessions'
    // load, checkpoints, autovacuum) falls on every kind alike instead of on whichever ran last.
    const series = { floor: [] as Array<WriteRun>, lock: [] as Array<WriteRun>, wal: [] as Array<WriteRun> }
    const cpuOf = { floor: [] as Array<CpuByRole>, lock: [] as Array<CpuByRole>, wal: [] as Array<CpuByRole> }
    const serviceName = (yield* AppConfig).databaseApplicationName
    const cpu = yield* Effect.promise(() => processCpu(pool, roleOf(serviceName)))
    const kinds = ["floor", "lock", "wal"] as const
    for (let round = 0; round < writes.rounds; round++) {
      for (let k = 0; k < kinds.length; k++) {
        const kind = kinds[(round + k) % kinds.length] ?? "floor"
        const unit = kind === "floor" ? floorUnits.unit : kind === "lock" ? lockUnits.unit : walUnits.unit
        const spent = yield* Effect.promise(() => cpu.start())
        series[kind].push(yield* concurrentUnits(writes.seconds, unit))
        cpuOf[kind].push(yield* Effect.promise(spent))
        if (kind === "wal") yield* positionerCaughtUp(pool, walSpace.workspace)
      }
      const ofRound = (kind: (typeof kinds)[number]) => series[kind][round] ?? writeRun([], 1)
      const [f, l, w] = [ofRound("floor"), ofRound("lock"), ofRound("wal")]
      yield* say(
        `[writes] round ${round + 1}: floor ${int(rate(f))}, lock ${int(rate(l))} (${pct(l, f)}), ` +
          `WAL ${int(rate(w))} (${pct(w, f)}) units/s`
      )
    }
    const cpuPerUnit = cpuTable({
      floor: { cpu: addCpu(cpuOf.floor), units: together(series.floor).units },
      lock: { cpu: addCpu(cpuOf.lock), units: together(series.lock).units },
      wal: { cpu: addCpu(cpuOf.wal), units: together(series.wal).units }
    })
    yield* say(cpuPerUnit)
    const floor = together(series.floor)
    const lock = together(series.lock)
    const wal = together(series.wal)
    const roundRatios = series.wal.map((w, round) => pct(w, series.floor[round] ?? w)).join(", ")
    yield* say(`[writes] floor (no feed position): ${int(rate(floor))} units/s, p99 ${floor.p99.toFixed(1)} ms`)
    yield* say(`[writes] lock mode: ${int(rate(lock))} units/s (${pct(lock, floor)} of the floor)`)
    yield* say(
      `[writes] WAL mode: ${int(rate(wal))} units/s (${pct(wal, floor)} of the floor; target >= 80 %; rounds ${roundRatios})`
    )
    // The delay has a series of its own: the reader measuring it is apparatus the floor has no counterpart of.
    const follower = yield* followPositions(postgres.url, walSpace.workspace)
    const followedUnits = rawUnits(pool, walSpace.workspace, walSpace.ids, "wal")
    const followed = yield* concurrentUnits(writes.seconds, followedUnits.unit)
    const delays = yield* feedDelays(followedUnits.committed, follower.seen)
    const delay = { p50: percentile(delays, 0.5), p99: percentile(delays, 0.99), max: delays[delays.length - 1] ?? 0 }
    yield* say(
      `[writes] WAL mode with a reader following the feed: ${int(rate(followed))} units/s (${pct(followed, floor)}); ` +
        `feed delay p50 ${delay.p50.toFixed(1)} ms, p99 ${delay.p99.toFixed(1)} ms (target <= 100 ms), max ${delay.max.toFixed(1)} ms`
    )
    const service = yield* concurrentUnits(writes.seconds, (writer, i) =>
      Effect.runPromise(
        units
          .run(walSpace.workspace, records.update(company, walSpace.ids[writer] ?? "", { name: `s${writer}.${i}` }))
          .pipe(withActor(actor), Effect.provide(services))
      )
    )
    yield* say(`[writes] the service in WAL mode (UnitOfWork + Records.update): ${int(rate(service))} units/s`)
    const load = (loadavg()[0] ?? 0).toFixed(1)
    const loaded =
      loadAtStart > cpus().length
        ? `\n**The machine was loaded** (load average ${loadAtStart.toFixed(1)} on ${cpus().length} cores before the bench began, other work running): the bench's
writers, the positioner and PostgreSQL waited for CPU, which shows in every latency and most in the feed delay (a
queue behind one consumer). Figures for this machine need a quiet run.\n`
        : ""
    const pass = (ok: boolean) => (ok ? "PASS" : "FAIL")
    const row = (name: string, run: WriteRun) =>
      `| ${name} | ${int(rate(run))} | ${pct(run, floor)} | ${run.p50.toFixed(1)} ms | ${run.p99.toFixed(1)} ms |`
    writeBenchmarkSection(
      "Feed positions from the WAL",
      `## Feed positions from the WAL

\`npm run bench:feed-writes\` (bench/feed.ts writes), ${env.date}, ${env.postgres} of the bench's own
(test/support/logicalPostgres.ts: \`wal_level=logical\`, \`fsync=on\`, \`synchronous_commit=on\`), Node ${env.node},
${env.machine}; load average ${load} at the end (the bench's own writers raise it).

${writes.writers} concurrent writers in one workspace, each updating its own record (distinct records: no record lock
in common), on node-postgres (the raw driver) with a pool of ${writes.writers + 2}; each
unit BEGIN, the record's locking read, its UPDATE, one audit INSERT, COMMIT. The INSERTs are the service's own text and
parameters (salts and content hashes included): the **floor** is the WAL mode's INSERT without its logical message (no
feed position at all); **lock mode** the INSERT that takes positions and chains rows under the workspace's counter
lock; **WAL mode** the INSERT with NULL position and the unit's \`pg_logical_emit_message\`, the service running in
WAL mode meanwhile (its positioner giving the rows their positions and links from the slot). ${writes.rounds} rounds of
one ${writes.seconds} s series per kind, the kinds' order rotated each round, each WAL series followed by a wait for the
positioner to finish its rows (its work stays out of the next series); each kind's figures are its series together.
Per round, WAL mode against that round's floor: ${roundRatios}.

| series | units/s | of the floor | p50 | p99 |
|---|---|---|---|---|
${row("floor: no feed position", floor)}
${row("lock mode", lock)}
${row("WAL mode", wal)}
${row("WAL mode with a reader following the feed (the delay below)", followed)}
${row("the service in WAL mode (UnitOfWork + Records.update)", service)}

WAL mode against the floor: **${pct(wal, floor)}** (target >= 80 %: ${pass(rate(wal) >= 0.8 * rate(floor))}); lock mode:
${pct(lock, floor)}.

Feed delay in WAL mode, in a series of its own (${writes.seconds} s) after the rounds, from each unit's COMMIT returning
at its writer to its row seen with a position by a reader (a query on its own connection after each of the
positioner's notices, LISTEN, and every 10 ms besides; the floor has no feed to read, hence no such reader), over
${int(delays.length)} units: p50 **${delay.p50.toFixed(1)} ms**, p99 **${delay.p99.toFixed(1)} ms** (target <= 100 ms:
${pass(delay.p99 <= 100)}), max ${delay.max.toFixed(1)} ms.

CPU per unit (ms of CPU of each process of the run, read from /proc at each series' start and end; the
service's backends run the positioner's statements; a short autovacuum worker ending inside a series is missed):

${cpuPerUnit}
${loaded}`
    )
    yield* say(`[bench] wrote the "Feed positions from the WAL" section of ${benchmarksFile}`)
  }).pipe(Effect.provide(services))
})

const writersName = "bench/writers"

/** The role of a backend of the bench's PostgreSQL, for the CPU table. */
const roleOf =
  (serviceName: string) =>
  (backend: { readonly backendType: string; readonly applicationName: string }): string => {
    if (backend.backendType === "walsender") return "walsender (the slot)"
    if (backend.backendType === "autovacuum worker") return "autovacuum"
    if (backend.backendType !== "client backend") return "PostgreSQL's own"
    if (backend.applicationName === writersName) return "the writers' backends"
    if (backend.applicationName.startsWith(serviceName)) return "the service's backends (the positioner)"
    return "other backends"
  }

/** CPU per unit by role, per kind of series, and WAL mode's over the floor's: a Markdown table. */
const cpuTable = (kinds: Record<"floor" | "lock" | "wal", { readonly cpu: CpuByRole; readonly units: number }>) => {
  const roles = [...new Set([...kinds.floor.cpu.keys(), ...kinds.lock.cpu.keys(), ...kinds.wal.cpu.keys()])]
  const per = (kind: "floor" | "lock" | "wal", role: string) =>
    (kinds[kind].cpu.get(role) ?? 0) / Math.max(1, kinds[kind].units)
  const total = (kind: "floor" | "lock" | "wal") => roles.reduce((sum, role) => sum + per(kind, role), 0)
  const ms = (value: number) => value.toFixed(3)
  const signed = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(3)}`
  return [
    "| process | floor | lock mode | WAL mode | WAL - floor |",
    "|---|---|---|---|---|",
    ...roles.map(
      (role) =>
        `| ${role} | ${ms(per("floor", role))} | ${ms(per("lock", role))} | ${ms(per("wal", role))} | ${signed(per("wal", role) - per("floor", role))} |`
    ),
    `| all | ${ms(total("floor"))} | ${ms(total("lock"))} | ${ms(total("wal"))} | ${signed(total("wal") - total("floor"))} |`
  ].join("\n")
}

const pct = (run: WriteRun, floor: WriteRun) => `${((100 * rate(run)) / rate(floor)).toFixed(0)} %`

const main =
  mode === "writes"
    ? writesBench
    : Effect.andThen(say(`[bench] database ${redactedUrl(databaseUrl)}`), exportBench).pipe(Effect.provide(BenchLive))

NodeRuntime.runMain(main.pipe(Effect.scoped, Effect.orDie))
