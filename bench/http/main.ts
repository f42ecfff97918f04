/**
 * `npm run bench:http`: the compiled service over HTTP against its floor, in
 * one run: a bare `node:http` server with node-postgres doing the same
 * statements (bench/http/bare.ts). Both run as their own processes on
 * external PostgreSQL (DATABASE_URL, else TEST_DATABASE_URL, else
 * postgres://postgres@127.0.0.1:5432/test) and, for the service, Redis
 * (REDIS_URL, else TEST_REDIS_URL, else redis://127.0.0.1:6379).
 *
 * Rows, each as service / floor / ratio:
 *  - PATCH of one record (update with audit), 1 client: p50 / p99;
 *  - sustained PATCH from 32 clients on 32 distinct records of one workspace,
 *    and from 32 clients on one record each of 32 different workspaces (each
 *    client signed in to its own workspace): throughput;
 *  - timeline page 1 and page 200 (limit 50) of a record with 20,000 rows: p50;
 *  - the ledger's chain (docs/ledger.md): a second floor, the same bare
 *    server sending the audit INSERT as it was before the ledger, in the
 *    1-client PATCH loop and the one-workspace 32-client row; the chain's cost
 *    is the floor's figure minus that one's, its share the cost over the
 *    service's figure (the service cannot run without the chain).
 * The service and the floor are measured interleaved (one request each in
 * turn; the 32-client windows alternate A B B A), so drift and other load on
 * the machine hit both alike. CPU per request: the server's (utime + stime
 * from /proc/<pid>/stat) and the load generator's own (process.cpuUsage).
 *
 * `--cpu-prof`: the service runs with `node --cpu-prof`; its profile is
 * summarized at the end (self time by package and function) and the section
 * is not written. `--quick`: fewer samples (a smoke run), section not written. `--no-write`: a full run that
 * leaves BENCHMARKS.md alone (a comparison run).
 */
import { type ChildProcess, fork, spawn, spawnSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync } from "node:fs"
import { cpus, tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { SqlClient } from "effect/sql"
import { Effect, Layer, ManagedRuntime, Option, Redacted, References } from "effect"
import { Pool } from "undici"
import { ServicesLive, StorageLive } from "../../src/app/AppLayer"
import { Memberships } from "../../src/auth/Memberships"
import { Roles } from "../../src/auth/Roles"
import { Users } from "../../src/auth/Users"
import { AppConfig } from "../../src/config/AppConfig"
import { withActor } from "../../src/context/Frames"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { Records } from "../../src/records/Records"
import { migrateSchema } from "../../src/tenancy/Migrations"
import { platformMigrations, platformSchema } from "../../src/tenancy/migrations/platform"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { summarizeProfile } from "../broadcast/profile"
import { benchmarksFile, writeBenchmarkSection } from "../benchmarksFile"
import { freePort } from "../freePort"
import { pairedMedian, pairedMedianInterval, percent } from "../ledger"
import { randomOrder } from "../order"

const repo = join(import.meta.dirname, "..", "..")
const databaseUrl =
  process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const redisUrl = process.env.REDIS_URL ?? process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"
const argv = process.argv.slice(2)
const cpuProf = argv.includes("--cpu-prof")
const quick = argv.includes("--quick")
const writesSection = !cpuProf && !quick && !argv.includes("--no-write")

const settings = {
  single: { warmUp: quick ? 100 : 500, samples: quick ? 300 : 3_000 },
  concurrent: { clients: 32, windowMs: quick ? 2_000 : 5_000, rounds: quick ? 1 : 3, warmUpMs: quick ? 1_000 : 2_000 },
  /** The 32-client row over as many workspaces as clients. */
  workspaces: 32,
  timeline: { rows: 20_000, limit: 50, page: 200, warmUp: quick ? 50 : 200, samples: quick ? 200 : 1_500 }
}
const goals = { patchRatio: 1.3, pageRatio: 1.3, page200OverPage1: 1.1, throughputShare: 0.8, chainShare: 0.05 }
const businessObject = "crm/company"
const password = "bench-http-password"
const ticksPerSecond = 100

// ---------------------------------------------------------------- helpers

const percentile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN
const summary = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return { n: sorted.length, p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) }
}
type Summary = ReturnType<typeof summary>

const cpuTicks = (pid: number): number => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  return Number(fields[11]) + Number(fields[12])
}
/** Microseconds of CPU of this process (the load generator) so far. */
const ownCpuMicros = () => {
  const usage = process.cpuUsage()
  return usage.user + usage.system
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

const say = (line: string) => console.log(line)
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(1))
const int = (value: number) => Math.round(value).toLocaleString("en-US")

// ---------------------------------------------------------------- data

const setupLayer = ServicesLive.pipe(
  Layer.provideMerge(PluginRegistry.layer),
  Layer.provideMerge(StorageLive),
  Layer.provideMerge(
    AppConfig.make({
      databaseUrl: Option.some(Redacted.make(databaseUrl)),
      redisUrl: Option.none(),
      databasePoolSize: 4
    })
  ),
  Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn"))
)

const slug = `bench-h-${crypto.randomUUID().slice(0, 8)}`
const email = `${slug}@example.com`
const recordsPerTarget = settings.concurrent.clients + 1

/**
 * A workspace with an admin user, 3 × 33 crm/company records (one set per server) and a timeline of 20,000 rows;
 * then 32 more workspaces (the same user an admin of each), with 2 records each (one per server).
 */
const setup = Effect.gen(function* () {
  yield* migrateSchema(platformSchema, platformMigrations)
  const sql = yield* SqlClient.SqlClient
  const workspaces = yield* Workspaces
  const users = yield* Users
  const memberships = yield* Memberships
  const roles = yield* Roles
  const units = yield* UnitOfWork
  const records = yield* Records
  const workspace = yield* workspaces.create(slug, "Bench HTTP")
  const user = yield* users.create({ email, name: "Bench HTTP", password })
  yield* sql.withTransaction(
    Effect.andThen(
      memberships.add(workspace.id, user.id),
      roles.assign(workspace, { kind: "user", id: user.id }, "admin")
    )
  )
  const created = yield* units
    .run(
      workspace,
      Effect.forEach(Array.from({ length: 3 * recordsPerTarget + 1 }), (_, i) =>
        records.create(businessObject, { name: `Company ${i}`, wonDeals: 0 })
      )
    )
    .pipe(withActor({ kind: "user", id: user.id, name: user.name, email: user.email }))
  const ids = created.map((r) => r.id)
  const timelineId = ids[ids.length - 1] ?? ""
  const table = sql(workspace.table("audit_entries"))
  yield* sql`INSERT INTO ${table} (id, at, actor, correlation_id, business_object, business_object_id, operation, changes)
    SELECT gen_random_uuid(), now() - (${settings.timeline.rows}::int - i) * interval '1 millisecond',
      ${JSON.stringify({ kind: "system", name: "seeder:bench" })}::jsonb, gen_random_uuid(), ${businessObject}, ${timelineId}, 'updated',
      jsonb_build_object('wonDeals', jsonb_build_object('from', i - 1, 'to', i))
    FROM generate_series(1, ${settings.timeline.rows}::int) AS i`
  yield* sql.unsafe(`VACUUM (ANALYZE) ${workspace.schema}.audit_entries`)
  const spread = yield* Effect.forEach(Array.from({ length: settings.workspaces }), (_, n) =>
    Effect.gen(function* () {
      const other = yield* workspaces.create(`${slug}-w${n}`, `Bench HTTP ${n}`)
      yield* sql.withTransaction(
        Effect.andThen(memberships.add(other.id, user.id), roles.assign(other, { kind: "user", id: user.id }, "admin"))
      )
      const [forService, forBare] = yield* units
        .run(
          other,
          Effect.forEach([0, 1], (i) => records.create(businessObject, { name: `Company ${n}.${i}`, wonDeals: 0 }))
        )
        .pipe(withActor({ kind: "user", id: user.id, name: user.name, email: user.email }))
      const record: SpreadRecord = {
        slug: other.slug,
        schema: other.schema,
        service: forService?.id ?? "",
        bare: forBare?.id ?? ""
      }
      return record
    })
  )
  return {
    workspace,
    service: ids.slice(0, recordsPerTarget),
    bare: ids.slice(recordsPerTarget, 2 * recordsPerTarget),
    unchained: ids.slice(2 * recordsPerTarget, 3 * recordsPerTarget),
    timelineId,
    spread
  }
}).pipe(Effect.orDie)

const teardown = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const workspaces = yield* Workspaces
  const found = (yield* workspaces.list).filter((w) => w.slug === slug || w.slug.startsWith(`${slug}-w`))
  yield* Effect.forEach(found, workspaces.drop, { discard: true })
  yield* sql`DELETE FROM ${sql(`${platformSchema}.users`)} WHERE email = ${email}`
}).pipe(Effect.orDie)

// ---------------------------------------------------------------- the two servers

interface Target {
  readonly name: "service" | "floor" | "floor without the chain"
  readonly child: ChildProcess
  readonly pid: number
  readonly origin: string
  /** One connection: the 1-client rows. */
  readonly one: Pool
  /** 32 connections: the sustained row. */
  readonly many: Pool
  readonly headers: Record<string, string>
  readonly patchPath: (id: string) => string
  readonly pagePath: (id: string, after: string | null) => string
  /** The clients of the many-workspace row: one record each, in its own workspace. */
  readonly spread: ReadonlyArray<Client>
}

/** One of the many-workspace row's workspaces: its slug and schema, and its record for each server. */
interface SpreadRecord {
  readonly slug: string
  readonly schema: string
  readonly service: string
  readonly bare: string
}

/** A client of a sustained row: its record and the headers that reach that record's workspace. */
interface Client {
  readonly id: string
  readonly headers: Record<string, string>
}

const waitForAnswer = async (child: ChildProcess, url: string) => {
  for (let i = 0; i < 600; i++) {
    if (child.exitCode !== null) throw new Error(`${url}: the process exited with ${child.exitCode}`)
    try {
      if ((await fetch(url)).status < 500) return
    } catch {
      // not listening yet
    }
    await sleep(50)
  }
  throw new Error(`${url}: no answer within 30 s`)
}

const profileDir = cpuProf ? mkdtempSync(join(tmpdir(), "bench-http-prof-")) : ""

const signIn = async (origin: string, workspace: string) => {
  const login = await fetch(`${origin}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json", origin },
    body: JSON.stringify({ workspace, email, password })
  })
  const cookie = login.headers.getSetCookie().map((c) => c.split(";")[0])[0]
  if (login.status !== 200 || cookie === undefined) throw new Error(`login to ${workspace} answered ${login.status}`)
  return { cookie, origin, "content-type": "application/json" }
}

const startService = async (spread: ReadonlyArray<SpreadRecord>): Promise<Target> => {
  const port = await freePort()
  const child = spawn(
    process.execPath,
    [
      ...(cpuProf ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []),
      "--max-semi-space-size=4",
      "dist/server/main.js"
    ],
    {
      cwd: repo,
      stdio: ["ignore", "ignore", "inherit"],
      env: {
        ...process.env,
        PORT: String(port),
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisUrl,
        NODE_ENV: "production"
      }
    }
  )
  const origin = `http://127.0.0.1:${port}`
  await waitForAnswer(child, `${origin}/api/health/live`)
  const headers = await signIn(origin, slug)
  const spreadClients: Array<Client> = []
  for (const record of spread) spreadClients.push({ id: record.service, headers: await signIn(origin, record.slug) })
  const encoded = encodeURIComponent(businessObject)
  return {
    name: "service",
    child,
    pid: child.pid ?? 0,
    origin,
    one: new Pool(origin, { connections: 1 }),
    many: new Pool(origin, { connections: settings.concurrent.clients }),
    headers,
    patchPath: (id) => `/api/records/${businessObject}/${id}`,
    pagePath: (id, after) =>
      `/api/audit/business-object/${encoded}/${id}?limit=${settings.timeline.limit}${after === null ? "" : `&cursor=${after}`}`,
    spread: spreadClients
  }
}

/** The bare server; `withoutChain`: sending the audit INSERT as it was before the ledger (bare.ts, AUDIT). */
const startBare = async (
  schema: string,
  spread: ReadonlyArray<SpreadRecord>,
  withoutChain = false
): Promise<Target> => {
  const port = await freePort()
  const child = fork(join(import.meta.dirname, "bare.ts"), [], {
    execArgv: ["--import", "tsx"],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
    env: {
      ...process.env,
      PORT: String(port),
      DATABASE_URL: databaseUrl,
      SCHEMA: schema,
      POOL: "10",
      AUDIT: withoutChain ? "withoutChain" : "ledger"
    }
  })
  const origin = `http://127.0.0.1:${port}`
  await waitForAnswer(child, `${origin}/`)
  return {
    name: withoutChain ? "floor without the chain" : "floor",
    child,
    pid: child.pid ?? 0,
    origin,
    one: new Pool(origin, { connections: 1 }),
    many: new Pool(origin, { connections: settings.concurrent.clients }),
    headers: { "content-type": "application/json" },
    patchPath: (id) => `/records/${businessObject}/${id}`,
    pagePath: (id, after) =>
      `/timeline/${businessObject}/${id}?limit=${settings.timeline.limit}${after === null ? "" : `&after=${after}`}`,
    spread: spread.map((record) => ({
      id: record.bare,
      headers: { "content-type": "application/json", "x-bench-schema": record.schema }
    }))
  }
}

// ---------------------------------------------------------------- requests

let sequence = 0
const patch = async (
  target: Target,
  pool: Pool,
  id: string,
  headers: Record<string, string> = target.headers
): Promise<number> => {
  const started = performance.now()
  const response = await pool.request({
    method: "PATCH",
    path: target.patchPath(id),
    headers,
    body: JSON.stringify({ values: { name: `Company ${++sequence}` } })
  })
  const text = await response.body.text()
  if (response.statusCode !== 200) throw new Error(`${target.name} PATCH answered ${response.statusCode}: ${text}`)
  return performance.now() - started
}

const page = async (target: Target, id: string, after: string | null) => {
  const started = performance.now()
  const response = await target.one.request({
    method: "GET",
    path: target.pagePath(id, after),
    headers: target.headers
  })
  const text = await response.body.text()
  if (response.statusCode !== 200) throw new Error(`${target.name} GET page answered ${response.statusCode}: ${text}`)
  return { ms: performance.now() - started, body: text }
}

const nextCursorOf = (body: string): string | null => {
  const parsed: unknown = JSON.parse(body)
  return typeof parsed === "object" &&
    parsed !== null &&
    "nextCursor" in parsed &&
    typeof parsed.nextCursor === "string"
    ? parsed.nextCursor
    : null
}

interface Measured {
  readonly summary: Summary
  /** The server's CPU per request, µs. */
  readonly serverCpuUs: number
}

/** One kind of request to one server, in an interleaved measurement. */
interface Case {
  readonly target: Target
  readonly run: () => Promise<number>
}

/**
 * Each case in turn (in a random order each time: bench/order.ts), `warmUp` then `samples` times each;
 * CPU of each server over its own requests (shared evenly by its cases), and
 * the load generator's over all of them.
 */
const interleavedCases = async (cases: ReadonlyArray<Case>, warmUp: number, samples: number) => {
  for (let i = 0; i < warmUp; i++) for (const c of cases) await c.run()
  const times = cases.map(() => [] as Array<number>)
  const servers = [...new Set(cases.map((c) => c.target))]
  const ticks = new Map(servers.map((t) => [t, cpuTicks(t.pid)]))
  const ownStart = ownCpuMicros()
  for (let i = 0; i < samples; i++) {
    for (const index of randomOrder(cases.length)) {
      const c = cases[index]
      if (c !== undefined) times[index]?.push(await c.run())
    }
  }
  const loadCpuUs = (ownCpuMicros() - ownStart) / (samples * cases.length)
  const usedUs = new Map(
    servers.map((t) => [t, ((cpuTicks(t.pid) - (ticks.get(t) ?? 0)) / ticksPerSecond) * 1e6] as const)
  )
  const results = cases.map(
    (c, index): Measured => ({
      summary: summary(times[index] ?? []),
      serverCpuUs: (usedUs.get(c.target) ?? 0) / (samples * cases.filter((other) => other.target === c.target).length)
    })
  )
  return { results, loadCpuUs, times }
}

/** `run(target)` for each target in turn (order alternating): interleavedCases with one case per target. */
const interleaved = (
  targets: ReadonlyArray<Target>,
  warmUp: number,
  samples: number,
  run: (target: Target) => Promise<number>
) =>
  interleavedCases(
    targets.map((target) => ({ target, run: () => run(target) })),
    warmUp,
    samples
  )

/** 32 clients, each on its own record, each sending its next PATCH when the previous is answered, for `windowMs`. */
const sustained = async (target: Target, clients: ReadonlyArray<Client>, windowMs: number) => {
  const times: Array<number> = []
  const ticks = cpuTicks(target.pid)
  const ownStart = ownCpuMicros()
  const started = performance.now()
  const deadline = started + windowMs
  await Promise.all(
    clients.map(async ({ id, headers }) => {
      while (performance.now() < deadline) times.push(await patch(target, target.many, id, headers))
    })
  )
  const elapsed = performance.now() - started
  return {
    times,
    count: times.length,
    elapsedMs: elapsed,
    serverCpuUs: (((cpuTicks(target.pid) - ticks) / ticksPerSecond) * 1e6) / times.length,
    loadCpuUs: (ownCpuMicros() - ownStart) / times.length
  }
}

// ---------------------------------------------------------------- main

const runtime = ManagedRuntime.make(setupLayer)
const runStarted = performance.now()
const build = spawnSync(process.execPath, ["scripts/build-if-stale.mjs"], { cwd: repo, stdio: "inherit" })
if (build.status !== 0) process.exit(build.status ?? 1)

const [pgVersion] = await runtime.runPromise(
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ readonly version: string }>`SELECT split_part(version(), ' on ', 1) AS version`
  )
)
say(
  `[http] setting up workspace ${slug} (3 × ${recordsPerTarget} records, a timeline of ${int(settings.timeline.rows)} rows)`
)
const data = await runtime.runPromise(setup)
const targets: Array<Target> = []
let exitCode = 0
try {
  targets.push(
    await startService(data.spread),
    await startBare(data.workspace.schema, data.spread),
    await startBare(data.workspace.schema, [], true)
  )
  const [service, floor, unchained] = targets
  if (service === undefined || floor === undefined || unchained === undefined) throw new Error("no targets")
  const recordsOf = (target: Target) =>
    target === service ? data.service : target === floor ? data.bare : data.unchained
  const singleId = (target: Target) => recordsOf(target)[0] ?? ""

  // 1. PATCH, one client.
  say(
    `[http] PATCH, 1 client: ${settings.single.warmUp} warm-up, then ${int(settings.single.samples)} each, interleaved`
  )
  const single = await interleaved(targets, settings.single.warmUp, settings.single.samples, (t) =>
    patch(t, t.one, singleId(t))
  )

  // 2. Timeline pages: walk the service's cursors to page 200 (the floor takes the same row's seq).
  say(`[http] timeline: walking to page ${settings.timeline.page}`)
  let cursor: string | null = null
  for (let p = 1; p < settings.timeline.page; p++)
    cursor = nextCursorOf((await page(service, data.timelineId, cursor)).body)
  if (cursor === null) throw new Error("the timeline ended before page 200")
  const seqOfCursor = (JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Array<string>)[0] ?? ""
  const pageAfter = (t: Target, n: 1 | 200) =>
    page(t, data.timelineId, n === 1 ? null : t === service ? cursor : seqOfCursor).then((r) => r.ms)
  // Pages 1 and 200 of both servers in one loop: page 200 / page 1 is then not a drift of the machine between two series.
  say(
    `[http] timeline pages 1 and ${settings.timeline.page}: ${int(settings.timeline.samples)} each, interleaved (both pages, both servers)`
  )
  const pages = await interleavedCases(
    [service, floor].flatMap((t) => [
      { target: t, run: () => pageAfter(t, 1) },
      { target: t, run: () => pageAfter(t, 200) }
    ]),
    settings.timeline.warmUp,
    settings.timeline.samples
  )

  // 3. Sustained PATCH, 32 clients; windows A B B A ...: on distinct records of one workspace, then on one record
  // in each of 32 workspaces.
  const sustainedRow = async (
    label: string,
    clientsOf: (target: Target) => ReadonlyArray<Client>,
    rowTargets: ReadonlyArray<Target> = [service, floor]
  ) => {
    say(
      `[http] PATCH, ${settings.concurrent.clients} clients ${label}: ${settings.concurrent.rounds} rounds of ${settings.concurrent.windowMs / 1000} s windows each (A B B A)`
    )
    for (const target of rowTargets) await sustained(target, clientsOf(target), settings.concurrent.warmUpMs)
    const windows = new Map<Target, Array<Awaited<ReturnType<typeof sustained>>>>(rowTargets.map((t) => [t, []]))
    for (let round = 0; round < settings.concurrent.rounds; round++) {
      const order = round % 2 === 0 ? rowTargets : [...rowTargets].reverse()
      for (const target of order)
        windows.get(target)?.push(await sustained(target, clientsOf(target), settings.concurrent.windowMs))
    }
    return rowTargets.map((target) => {
      const list = windows.get(target) ?? []
      const count = list.reduce((s, w) => s + w.count, 0)
      const elapsed = list.reduce((s, w) => s + w.elapsedMs, 0)
      return {
        throughput: (count / elapsed) * 1000,
        latency: summary(list.flatMap((w) => w.times)),
        serverCpuUs: list.reduce((s, w) => s + w.serverCpuUs * w.count, 0) / count,
        loadCpuUs: list.reduce((s, w) => s + w.loadCpuUs * w.count, 0) / count
      }
    })
  }
  const concurrent = await sustainedRow(
    "on distinct records of one workspace",
    (target) =>
      recordsOf(target)
        .slice(1)
        .map((id) => ({ id, headers: target.headers })),
    [service, floor, unchained]
  )
  const acrossWorkspaces = await sustainedRow(
    `on records of ${settings.workspaces} different workspaces`,
    (target) => target.spread
  )

  // ------------------------------------------------------------ report
  const [sPatch, fPatch, uPatch] = single.results
  const [sPage1, sPage200, fPage1, fPage200] = pages.results
  const [sConc, fConc, uConc] = concurrent
  const [sSpread, fSpread] = acrossWorkspaces
  if (
    [sPatch, fPatch, uPatch, sPage1, fPage1, sPage200, fPage200, sConc, fConc, uConc, sSpread, fSpread].some(
      (x) => x === undefined
    )
  )
    throw new Error("missing results")
  // The chain: the two floors' PATCHes of the same iterations, paired (same iteration, same machine).
  const chainMs = pairedMedian(single.times[1] ?? [], single.times[2] ?? [])
  const [chainLowMs, chainHighMs] = pairedMedianInterval(single.times[1] ?? [], single.times[2] ?? [])
  const chainShare = chainMs / sPatch!.summary.p50
  const chainCpuUs = fPatch!.serverCpuUs - uPatch!.serverCpuUs
  const pass = (ok: boolean) => (ok ? "**PASS**" : "**FAIL**")
  const r = (a: number, b: number) => `${(a / b).toFixed(2)}×`
  const patchRatio = sPatch!.summary.p50 / fPatch!.summary.p50
  const page1Ratio = sPage1!.summary.p50 / fPage1!.summary.p50
  const page200Ratio = sPage200!.summary.p50 / fPage200!.summary.p50
  const pageSpread = sPage200!.summary.p50 / sPage1!.summary.p50
  const share = sConc!.throughput / fConc!.throughput
  const spreadShare = sSpread!.throughput / fSpread!.throughput
  const rows = [
    "| path | service | floor (bare node:http + pg, same run) | ratio | target | |",
    "|---|---|---|---|---|---|",
    `| PATCH, 1 client, p50 | ${ms(sPatch!.summary.p50)} ms | ${ms(fPatch!.summary.p50)} ms | ${patchRatio.toFixed(2)}× | <= ${goals.patchRatio}× | ${pass(patchRatio <= goals.patchRatio)} |`,
    `| PATCH, 1 client, p99 | ${ms(sPatch!.summary.p99)} ms | ${ms(fPatch!.summary.p99)} ms | ${r(sPatch!.summary.p99, fPatch!.summary.p99)} | | |`,
    `| PATCH, 1 client, server CPU per request | ${int(sPatch!.serverCpuUs)} µs | ${int(fPatch!.serverCpuUs)} µs | ${r(sPatch!.serverCpuUs, fPatch!.serverCpuUs)} | | |`,
    `| PATCH, ${settings.concurrent.clients} clients on records of ${settings.workspaces} different workspaces, throughput | ${int(sSpread!.throughput)}/s | ${int(fSpread!.throughput)}/s | ${(spreadShare * 100).toFixed(0)} % | >= ${goals.throughputShare * 100} % | ${pass(spreadShare >= goals.throughputShare)} |`,
    `| PATCH, ${settings.concurrent.clients} clients on ${settings.workspaces} workspaces, p50 / p99 | ${ms(sSpread!.latency.p50)} / ${ms(sSpread!.latency.p99)} ms | ${ms(fSpread!.latency.p50)} / ${ms(fSpread!.latency.p99)} ms | ${r(sSpread!.latency.p50, fSpread!.latency.p50)} | | |`,
    `| PATCH, ${settings.concurrent.clients} clients on ${settings.workspaces} workspaces, server CPU per request | ${int(sSpread!.serverCpuUs)} µs | ${int(fSpread!.serverCpuUs)} µs | ${r(sSpread!.serverCpuUs, fSpread!.serverCpuUs)} | | |`,
    `| PATCH, ${settings.concurrent.clients} clients on distinct records of one workspace, throughput | ${int(sConc!.throughput)}/s | ${int(fConc!.throughput)}/s | ${(share * 100).toFixed(0)} % | | |`,
    `| PATCH, ${settings.concurrent.clients} clients on one workspace, p50 / p99 | ${ms(sConc!.latency.p50)} / ${ms(sConc!.latency.p99)} ms | ${ms(fConc!.latency.p50)} / ${ms(fConc!.latency.p99)} ms | ${r(sConc!.latency.p50, fConc!.latency.p50)} | | |`,
    `| PATCH, ${settings.concurrent.clients} clients on one workspace, server CPU per request | ${int(sConc!.serverCpuUs)} µs | ${int(fConc!.serverCpuUs)} µs | ${r(sConc!.serverCpuUs, fConc!.serverCpuUs)} | | |`,
    `| PATCH, 1 client, p50: the floor without the chain (its audit INSERT as before the ledger) | | ${ms(uPatch!.summary.p50)} ms | | | |`,
    `| PATCH, 1 client: the chain's cost (floor minus floor without it, paired median; 95 % interval), share of the service's p50 | ${ms(chainMs)} ms (${ms(chainLowMs)} to ${ms(chainHighMs)}) of ${ms(sPatch!.summary.p50)} ms | | ${percent(chainShare)} (${percent(chainLowMs / sPatch!.summary.p50)} to ${percent(chainHighMs / sPatch!.summary.p50)}) | <= ${percent(goals.chainShare)} | ${pass(chainShare <= goals.chainShare)} |`,
    `| PATCH, 1 client: the chain's server CPU per request (floor minus floor without it), share of the service's | ${int(chainCpuUs)} µs of ${int(sPatch!.serverCpuUs)} µs | ${int(fPatch!.serverCpuUs)} / ${int(uPatch!.serverCpuUs)} µs | ${percent(chainCpuUs / sPatch!.serverCpuUs)} | | |`,
    `| PATCH, ${settings.concurrent.clients} clients on one workspace, throughput: the floor without the chain | | ${int(uConc!.throughput)}/s (p50 ${ms(uConc!.latency.p50)} ms) | with the chain ${((fConc!.throughput / uConc!.throughput) * 100).toFixed(0)} % of it | | |`,
    `| timeline page 1, p50 | ${ms(sPage1!.summary.p50)} ms | ${ms(fPage1!.summary.p50)} ms | ${page1Ratio.toFixed(2)}× | <= ${goals.pageRatio}× | ${pass(page1Ratio <= goals.pageRatio)} |`,
    `| timeline page ${settings.timeline.page}, p50 | ${ms(sPage200!.summary.p50)} ms | ${ms(fPage200!.summary.p50)} ms | ${page200Ratio.toFixed(2)}× | <= ${goals.pageRatio}× | ${pass(page200Ratio <= goals.pageRatio)} |`,
    `| timeline page ${settings.timeline.page} / page 1, p50 | ${pageSpread.toFixed(2)}× | ${(fPage200!.summary.p50 / fPage1!.summary.p50).toFixed(2)}× | | <= ${goals.page200OverPage1}× | ${pass(pageSpread <= goals.page200OverPage1)} |`,
    `| timeline pages 1 and ${settings.timeline.page}, server CPU per request | ${int(sPage1!.serverCpuUs)} µs | ${int(fPage1!.serverCpuUs)} µs | ${r(sPage1!.serverCpuUs, fPage1!.serverCpuUs)} | | |`
  ].join("\n")
  const loadLine =
    `Load generator (this process, undici keep-alive pools) CPU per request: PATCH 1 client ${int(single.loadCpuUs)} µs, ` +
    `pages ${int(pages.loadCpuUs)} µs, ` +
    `32 clients ${int(sConc!.loadCpuUs)} µs (against the service) / ${int(fConc!.loadCpuUs)} µs (against the floor).`
  say("")
  say(rows)
  say("")
  say(loadLine)

  if (cpuProf) {
    await stop(service.child)
    await sleep(500)
    for (const file of readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile"))) {
      say(`\n[http] service profile ${join(profileDir, file)}:`)
      say(summarizeProfile(readFileSync(join(profileDir, file), "utf8"), 40))
    }
  }

  const seconds = (performance.now() - runStarted) / 1000
  if (writesSection) {
    writeBenchmarkSection(
      "HTTP",
      `## HTTP

Written by \`npm run bench:http\` (bench/http/main.ts) on ${new Date().toISOString().slice(0, 10)}; the run took ${seconds.toFixed(0)} s.
Machine: ${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}, Node ${process.version}, ${pgVersion?.version ?? "PostgreSQL"};
PostgreSQL and Redis on the same machine; the service, the floor, the load generator and the databases share its cores
(other work on the machine may add noise: the rows are ratios of interleaved measurements in one run).

- **service**: the compiled service, \`node --max-semi-space-size=4 dist/server/main.js\` (as \`npm start\` runs it),
  \`NODE_ENV=production\`, default settings (pool of 10 for writes, 5 for reads, INFO logs to a discarded stdout),
  signed in with a session cookie; \`PATCH /api/records/crm/company/<id>\` setting \`name\`, and
  \`GET /api/audit/business-object/crm%2Fcompany/<id>?limit=50[&cursor=]\`.
- **floor**: bench/http/bare.ts, a bare \`node:http\` server with node-postgres (pool of 10) sending the same statements, prepared
  (bench/http/statements.ts): PATCH = BEGIN, SELECT ... FOR UPDATE, UPDATE ... RETURNING, the audit INSERT, COMMIT;
  a page = the keyset query. No authentication: the service's session and grant reads are part of what it costs over the floor.
- Load: undici keep-alive pools from this process; 1-client rows send one request to each server in turn, in a random
  order each time (${int(settings.single.samples)} PATCHes, ${int(settings.timeline.samples)} of each page, after a warm-up; pages 1 and 200 in the same loop); the 32-client rows run
  ${settings.concurrent.rounds} windows of ${settings.concurrent.windowMs / 1000} s per server in the order A B B A (A B C C B A A B C with the floor without the chain), 32 clients each on its own record:
  once all in one workspace (one session; their units serialise on the workspace's feed counter, docs/feed.md),
  once one record in each of ${settings.workspaces} workspaces (one session per workspace; the floor picks the schema per request).
  CPU per request: the server's utime + stime (/proc/<pid>/stat) over its own requests.
- **the ledger's chain**: the floor sends the service's audit INSERT (its text and parameters from
  src/unitOfWork/AuditStaging.ts: salts and content hashes built in the floor as in the service); a second bare server,
  **floor without the chain**, sends the INSERT as it was before the ledger (positions only) and runs in the 1-client
  PATCH loop and the one-workspace 32-client row. The chain's cost is the floor's figure minus that one's; its share,
  that cost over the service's figure (the service has no switch for the chain). Details: the Ledger section.

${rows}

${loadLine}
`
    )
    say(`[http] wrote the HTTP section of ${benchmarksFile} (${seconds.toFixed(0)} s)`)
  }
} catch (error) {
  console.error(error)
  exitCode = 1
} finally {
  for (const target of targets) {
    await target.one.close()
    await target.many.close()
    await stop(target.child)
  }
  await runtime.runPromise(teardown)
  await runtime.dispose()
  if (cpuProf) say(`[http] profiles kept in ${profileDir} (remove it when done)`)
}
process.exit(exitCode)
