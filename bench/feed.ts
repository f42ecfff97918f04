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
 * `npm run bench:feed-writes`: the write cost of the feed position. 32
 * concurrent writers in one workspace, each unit the statements a
 * one-record update unit sends (lock the record, update it, one audit
 * INSERT, COMMIT), with the feed position (the INSERT's CTE on the
 * workspace counter, as the service runs it) and without (the INSERT as it
 * was before migration 0008): units/s and commit latency of each; then the
 * real service path (UnitOfWork + Records.update) for reference.
 *
 * Each rewrites its section of BENCHMARKS.md. Database: DATABASE_URL, else
 * TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test. No Redis
 * needed (in-process bus).
 */
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
import { UnitOfWork } from "../src/unitOfWork/UnitOfWork"
import { benchmarksFile, writeBenchmarkSection } from "./benchmarksFile"

const databaseUrl =
  process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const mode = process.argv[2] === "writes" ? "writes" : "export"

const exportRows = Number(process.env.BENCH_EXPORT_ROWS ?? "1000000")
const chunk = 100_000
const rssTargetMiB = 64
const writes = { writers: 32, records: 20, seconds: Number(process.env.BENCH_WRITE_SECONDS ?? "10") }

const int = (value: number) => Math.round(value).toLocaleString("en-US")
const mib = (bytes: number) => bytes / 1024 / 1024
const say = (line: string) => Effect.sync(() => console.log(line))
const redactedUrl = (url: string) => url.replace(/\/\/[^@/]*@/, "//")
const actor: Actor = { kind: "system", name: "seeder:bench" }

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
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)] ?? Number.NaN

/** `writers` loops of one unit after another for `seconds`, each unit `unit(writer, i)`; units/s and latency. */
const concurrentUnits = (
  seconds: number,
  unit: (writer: number, i: number) => Effect.Effect<unknown, unknown>,
  writers: number = writes.writers
) =>
  Effect.gen(function* () {
    const latencies: Array<number> = []
    const deadline = performance.now() + seconds * 1_000
    const started = performance.now()
    yield* Effect.forEach(
      Array.from({ length: writers }, (_, n) => n),
      (n) =>
        Effect.gen(function* () {
          for (let i = 0; performance.now() < deadline; i++) {
            const t0 = performance.now()
            yield* unit(n, i).pipe(Effect.orDie)
            latencies.push(performance.now() - t0)
          }
        }),
      { concurrency: "unbounded", discard: true }
    )
    const sorted = latencies.sort((a, b) => a - b)
    return {
      units: sorted.length,
      seconds: (performance.now() - started) / 1000,
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99)
    } satisfies WriteRun
  })

const writesBench = Effect.gen(function* () {
  const env = yield* environment
  const sql = yield* SqlClient.SqlClient
  const workspace = yield* benchWorkspace("writes")
  const records = yield* Records
  const units = yield* UnitOfWork
  const table = sql(workspace.table("audit_entries"))
  const recordsTable = sql(workspace.table("records"))
  const created = yield* Effect.forEach(
    Array.from({ length: writes.records }, (_, i) => i),
    (i) => units.run(workspace, records.create("crm/company", { name: `company ${i}` })).pipe(withActor(actor))
  )
  const idOf = (writer: number, i: number) => created[(writer * 7 + i) % writes.records]?.id ?? ""

  /** The statements of a one-record update unit, the audit INSERT with or without the feed position. */
  const rawUnit = (feed: boolean) => (writer: number, i: number) =>
    Effect.gen(function* () {
      const id = idOf(writer, i)
      yield* sql`SELECT version FROM ${recordsTable} WHERE business_object = 'crm/company' AND id = ${id} FOR UPDATE`
      yield* sql`UPDATE ${recordsTable} SET values = jsonb_set(values, '{name}', to_jsonb(${`w${writer}.${i}`}::text)),
        version = version + 1 WHERE business_object = 'crm/company' AND id = ${id}`
      const row = sql`SELECT gen_random_uuid(), ${JSON.stringify(actor)}::jsonb, gen_random_uuid(), 'crm/company', ${id},
          'updated', jsonb_build_object('name', jsonb_build_object('from', 'a', 'to', 'b'))`
      if (feed) {
        yield* sql`WITH taken AS (
            UPDATE ${sql(workspace.table("feed_position"))} SET position = position + 1 RETURNING position
          )
          INSERT INTO ${table} (id, actor, correlation_id, business_object, business_object_id, operation, changes, position)
          SELECT r.*, taken.position FROM taken, (${row}) AS r`
      } else {
        yield* sql`INSERT INTO ${table} (id, actor, correlation_id, business_object, business_object_id, operation, changes)
          ${row}`
      }
    }).pipe(sql.withTransaction)

  yield* say(`[writes] ${writes.writers} writers over ${writes.records} records, ${writes.seconds} s per series`)
  // Without: the INSERT as before 0008 (no position: the column may be NULL, no trigger).
  yield* sql`ALTER TABLE ${table} ALTER COLUMN position DROP NOT NULL`
  yield* sql`ALTER TABLE ${table} DISABLE TRIGGER audit_entries_feed_position`
  yield* concurrentUnits(2, rawUnit(false))
  const without = yield* concurrentUnits(writes.seconds, rawUnit(false))
  const withoutFew = yield* concurrentUnits(writes.seconds, rawUnit(false), 4)
  yield* sql`ALTER TABLE ${table} ENABLE TRIGGER audit_entries_feed_position`
  yield* say(
    `[writes] without the feed position: ${int(without.units / without.seconds)} units/s, p50 ${without.p50.toFixed(1)} ms, p99 ${without.p99.toFixed(1)} ms`
  )
  const withFeed = yield* concurrentUnits(writes.seconds, rawUnit(true))
  const withFeedFew = yield* concurrentUnits(writes.seconds, rawUnit(true), 4)
  yield* say(
    `[writes] 4 writers: without ${int(withoutFew.units / withoutFew.seconds)} units/s, with ${int(withFeedFew.units / withFeedFew.seconds)} units/s`
  )
  yield* say(
    `[writes] with the feed position:    ${int(withFeed.units / withFeed.seconds)} units/s, p50 ${withFeed.p50.toFixed(1)} ms, p99 ${withFeed.p99.toFixed(1)} ms`
  )
  const service = yield* concurrentUnits(writes.seconds, (writer, i) =>
    units
      .run(workspace, records.update("crm/company", idOf(writer, i), { name: `s${writer}.${i}` }))
      .pipe(withActor(actor))
  )
  yield* say(
    `[writes] the service (UnitOfWork + Records.update): ${int(service.units / service.seconds)} units/s, p50 ${service.p50.toFixed(1)} ms, p99 ${service.p99.toFixed(1)} ms`
  )
  const [sync] = yield* sql<{
    readonly setting: string
  }>`SELECT setting FROM pg_settings WHERE name = 'synchronous_commit'`
  const ratio = without.units / without.seconds / (withFeed.units / withFeed.seconds)
  const row = (name: string, run: WriteRun) =>
    `| ${name} | ${int(run.units / run.seconds)} | ${run.p50.toFixed(1)} ms | ${run.p99.toFixed(1)} ms |`
  writeBenchmarkSection(
    "Feed write cost",
    `## Feed write cost

\`npm run bench:feed-writes\` (bench/feed.ts writes), ${env.date}, ${env.postgres} (synchronous_commit
${sync?.setting ?? "?"}), Node ${env.node}, ${env.machine}, on the test database (${redactedUrl(databaseUrl)}).

${writes.writers} concurrent writers in one workspace over ${writes.records} records, ${writes.seconds} s per series,
each unit the statements of a one-record update (lock the record, update it, one audit INSERT, COMMIT) on a pool
of ${writes.writers + 2} connections. "With" is the INSERT as the service sends it since migration 0008: a CTE moves
the workspace's feed counter on and locks it to COMMIT, so the units of a workspace pass flush + COMMIT one at a time.
"Without" is the INSERT as before (no position).

| series | units/s | p50 | p99 |
|---|---|---|---|
${row(`${writes.writers} writers, without the feed position`, without)}
${row(`${writes.writers} writers, with the feed position`, withFeed)}
${row("4 writers, without the feed position", withoutFew)}
${row("4 writers, with the feed position", withFeedFew)}
${row("the service (UnitOfWork + Records.update, with)", service)}

Ratio without / with at ${writes.writers} writers: **${ratio.toFixed(2)}**; at 4 writers:
**${(withoutFew.units / withoutFew.seconds / (withFeedFew.units / withFeedFew.seconds)).toFixed(2)}**. The cost is the per-workspace serialization of flush + COMMIT (the
commit's WAL flush included): it bounds one workspace's commit rate by its commit latency, while other workspaces
are not affected (each has its own counter). Why this and not a snapshot horizon: docs/feed.md, "Order".
`
  )
  yield* say(`[bench] wrote the "Feed write cost" section of ${benchmarksFile} (without/with ${ratio.toFixed(2)})`)
})

const main = Effect.gen(function* () {
  yield* say(`[bench] database ${redactedUrl(databaseUrl)}`)
  yield* mode === "writes" ? writesBench : exportBench
}).pipe(Effect.scoped)

NodeRuntime.runMain(main.pipe(Effect.provide(BenchLive), Effect.orDie))
