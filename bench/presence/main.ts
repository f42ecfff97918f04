/**
 * `npm run bench:presence`: presence heartbeats over HTTP on one instance of
 * the compiled service (`dist/server/main.js`, built first if stale), against
 * its floor in the same run: a bare `node:http` server doing one Redis ZADD
 * per request (bare.ts). Both are driven by the same load generator, several
 * processes (client.ts) with `connections` keep-alive connections in all,
 * each sending the next heartbeat when the previous one is answered. The two
 * targets take turns, round after round, so that what else the machine does
 * falls on both alike.
 *
 * Options: `--rounds=N`, `--measure-ms=N`, `--connections=N`,
 * `--cpu-prof` (profiles the service, writes nothing to BENCHMARKS.md; with
 * `--source` the service runs from src/ through tsx, so the profile names its files),
 * `--quick` (a smoke test). A full default run writes the section
 * "Presence" of BENCHMARKS.md.
 */
import { fork, spawn, spawnSync } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { cpus, tmpdir, totalmem } from "node:os"
import { join, resolve } from "node:path"
import { Effect, Schema } from "effect"
import { writeBenchmarkSection } from "../benchmarksFile"
import { summarizeProfile } from "../broadcast/profile"
import { businessObject, createBenchData, dropBenchData, emailOf, makeRuntime, password } from "../broadcast/setup"
import {
  cpuTicks,
  describePercentiles,
  formatMs,
  now,
  pidsByComm,
  Samples,
  sleep,
  ticksPerSecond
} from "../broadcast/stats"
import type { Percentiles } from "../broadcast/protocol"
import { ClientReply } from "./protocol"
import type { RunResult } from "./protocol"
import { freePort } from "../freePort"

const repo = resolve(import.meta.dirname, "../..")
const databaseUrl =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379"

const argv = process.argv.slice(2)
const flag = (name: string) => argv.includes(`--${name}`)
const option = (name: string, fallback: number) => {
  const value = argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)
  return value === undefined ? fallback : Number(value)
}
const quick = flag("quick")
const cpuProfile = flag("cpu-prof")
/** Runs `src/main.ts` through tsx instead of the build: a profile then names the service's own files and functions. */
const fromSource = flag("source")
const settings = {
  workspaces: quick ? 4 : 20,
  editorsPerWorkspace: quick ? 20 : 100,
  records: 100,
  connections: option("connections", 64),
  clientProcesses: 2,
  rounds: option("rounds", quick ? 1 : 4),
  warmupMs: 1_500,
  measureMs: option("measure-ms", quick ? 2_000 : 5_000)
}
const writesReport = !quick && !cpuProfile && argv.length === 0

const log = (line: string) => console.log(`[bench:presence] ${line}`)

const runDir = mkdtempSync(join(tmpdir(), "bench-presence-"))
const children: Array<ChildProcess> = []

const stopChild = async (child: ChildProcess, graceMs = 10_000) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((done) => child.once("exit", () => done()))
  child.kill("SIGTERM")
  const timeout = sleep(cpuProfile ? 60_000 : graceMs).then(() => "timeout" as const)
  if ((await Promise.race([exited, timeout])) === "timeout") {
    child.kill("SIGKILL")
    await exited
  }
}

/** The compiled service, as `npm start` runs it. */
const startService = async (port: number) => {
  if (!fromSource) {
    const built = spawnSync(process.execPath, ["scripts/build-if-stale.mjs"], { cwd: repo, stdio: "inherit" })
    if (built.status !== 0) throw new Error("the build failed")
  }
  const logFile = openSync(join(runDir, "server.log"), "a")
  const child = spawn(
    process.execPath,
    [
      ...(cpuProfile ? ["--cpu-prof", `--cpu-prof-dir=${runDir}`] : []),
      `--max-semi-space-size=${option("semi-space", 4)}`,
      ...(fromSource ? ["--import", "tsx", "src/main.ts"] : ["dist/server/main.js"])
    ],
    {
      cwd: repo,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        REDIS_URL: redisUrl,
        HOST: "127.0.0.1",
        PORT: String(port),
        LOG_LEVEL: "WARN",
        DATABASE_POOL_SIZE: "10",
        LOGIN_MAX_PER_ADDRESS: "1000000"
      },
      stdio: ["ignore", logFile, logFile]
    }
  )
  children.push(child)
  const deadline = now() + 60_000
  while (now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited; see ${join(runDir, "server.log")}`)
    const status = await fetch(`http://127.0.0.1:${port}/api/health`).then(
      (r) => r.status,
      () => 0
    )
    if (status === 200) return child
    await sleep(200)
  }
  throw new Error("the service did not become healthy within 60 s")
}

const startBare = () =>
  new Promise<{ child: ChildProcess; port: number }>((resolveBare, reject) => {
    const child = fork(join(import.meta.dirname, "bare.ts"), [], {
      cwd: repo,
      execArgv: ["--import", "tsx"],
      env: { ...process.env, BENCH_REDIS_URL: redisUrl }
    })
    children.push(child)
    child.once("message", (message: unknown) => {
      const port = typeof message === "object" && message !== null && "port" in message ? Number(message.port) : NaN
      if (Number.isNaN(port)) reject(new Error(`bare server said ${JSON.stringify(message)}`))
      else resolveBare({ child, port })
    })
    child.once("exit", (code) => reject(new Error(`bare server exited (${code})`)))
  })

interface Client {
  readonly child: ChildProcess
  readonly run: (command: Record<string, unknown>) => Promise<RunResult>
}

const startClient = () =>
  new Promise<Client>((resolveClient, reject) => {
    const child = fork(join(import.meta.dirname, "client.ts"), [], { cwd: repo, execArgv: ["--import", "tsx"] })
    children.push(child)
    let waiting: { resolve: (r: RunResult) => void; reject: (e: Error) => void } | undefined
    child.on("message", (raw: unknown) => {
      const reply = Schema.decodeUnknownSync(ClientReply)(raw)
      if (reply._tag === "Ready")
        return resolveClient({
          child,
          run: (command) =>
            new Promise<RunResult>((res, rej) => {
              waiting = { resolve: res, reject: rej }
              child.send(command)
            })
        })
      if (reply._tag === "Done") waiting?.resolve(reply.result)
      else waiting?.reject(new Error(reply.message))
      waiting = undefined
    })
    child.once("exit", (code) => {
      reject(new Error(`load generator exited (${code})`))
      waiting?.reject(new Error(`load generator exited (${code})`))
    })
  })

const signIn = async (port: number, workspace: string, email: string) => {
  const response = await fetch(`http://127.0.0.1:${port}/api/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ workspace, email, password })
  })
  const pair = (response.headers.get("set-cookie") ?? "").split(";")[0] ?? ""
  if (response.status !== 200 || !pair.startsWith("session=")) {
    throw new Error(`sign-in to ${workspace} failed: ${response.status} ${await response.text()}`)
  }
  return pair
}

type TargetName = "service" | "floor"

interface Round {
  readonly target: TargetName
  readonly beatsPerSecond: number
  readonly failed: number
  readonly firstError?: string
  /** CPU over the window, % of one core. */
  readonly targetCpu: number
  readonly loadCpu: number
  readonly postgresCpu: number
  readonly redisCpu: number
}

/** CPU ticks of each process of a group (PostgreSQL's backends, Redis). */
const ticksOf = (comm: string) => new Map(pidsByComm(comm).map((pid) => [pid, cpuTicks(pid)]))
/** Ticks the group spent between two readings; a process gone meanwhile (a backend that closed) counts nothing. */
const ticksBetween = (before: ReadonlyMap<number, number>, after: ReadonlyMap<number, number>) => {
  let total = 0
  for (const [pid, ticks] of after) total += ticks - (before.get(pid) ?? ticks)
  return total
}

const runBench = async () => {
  const started = now()
  log(`setting up ${settings.workspaces} workspaces with ${settings.records} records each (database ${databaseUrl})`)
  const setup = makeRuntime(databaseUrl, redisUrl, 5)
  const created = await setup
    .runPromise(Effect.andThen(dropBenchData, createBenchData(settings.workspaces, settings.records)))
    .finally(() => setup.dispose())

  const servicePort = await freePort()
  const service = await startService(servicePort)
  const bare = await startBare()
  const cookies = await Promise.all(
    created.map((entry, i) => signIn(servicePort, entry.workspace.slug, emailOf(i + 1)))
  )
  const [namespace, name] = businessObject.split("/")
  const paths = created.flatMap((entry, w) =>
    Array.from({ length: settings.editorsPerWorkspace }, (_, e) => ({
      path: `/api/presence/${namespace}/${name}/${entry.recordIds[e % entry.recordIds.length] ?? "x"}/bench-e-${w}-${e}`,
      cookie: cookies[w] ?? ""
    }))
  )
  const clients = await Promise.all(Array.from({ length: settings.clientProcesses }, startClient))
  log(
    `service pid ${service.pid} (compiled), floor pid ${bare.child.pid}, ${clients.length} load-generator processes, ` +
      `${settings.connections} connections, ${paths.length} editors over ${settings.workspaces} sessions`
  )

  const pidOf = (target: TargetName) => (target === "service" ? (service.pid ?? 0) : (bare.child.pid ?? 0))
  const portOf = (target: TargetName) => (target === "service" ? servicePort : bare.port)
  const perProcess = Math.ceil(settings.connections / clients.length)

  const measure = async (target: TargetName, warmupMs: number, measureMs: number) => {
    const pid = pidOf(target)
    let before = { at: 0, target: 0, postgres: ticksOf("postgres"), redis: ticksOf("redis-server") }
    const snapshot = setTimeout(() => {
      before = { at: now(), target: cpuTicks(pid), postgres: ticksOf("postgres"), redis: ticksOf("redis-server") }
    }, warmupMs)
    const results = await Promise.all(
      clients.map((client, p) =>
        client.run({
          _tag: "Run",
          port: portOf(target),
          paths,
          connections: Math.min(perProcess, settings.connections - p * perProcess),
          offset: p * perProcess,
          stride: settings.connections,
          warmupMs,
          measureMs
        })
      )
    )
    clearTimeout(snapshot)
    // The window ended when the clients stopped; the last answers come within a few ms of it.
    const seconds = (now() - before.at) / 1000
    const percent = (ticks: number) => Math.round((ticks / ticksPerSecond / seconds) * 100)
    const completed = results.reduce((n, r) => n + r.completed, 0)
    const samples = results.flatMap((r) => r.latencyMs)
    const round: Round = {
      target,
      beatsPerSecond: completed / (measureMs / 1000),
      failed: results.reduce((n, r) => n + r.failed, 0),
      firstError: results.find((r) => r.firstError !== undefined)?.firstError,
      targetCpu: percent(cpuTicks(pid) - before.target),
      loadCpu: Math.round(results.reduce((n, r) => n + r.cpuMs, 0) / (measureMs / 1000) / 10),
      postgresCpu: percent(ticksBetween(before.postgres, ticksOf("postgres"))),
      redisCpu: percent(ticksBetween(before.redis, ticksOf("redis-server")))
    }
    return { round, samples }
  }

  // One unmeasured pass each: the arrivals (every editor's first heartbeat) and JIT warm-up.
  for (const target of ["floor", "service"] as const) await measure(target, 500, 2_000)

  const rounds: Array<Round> = []
  const latency: Record<TargetName, Samples> = { service: new Samples(1 << 18), floor: new Samples(1 << 18) }
  for (let r = 0; r < settings.rounds; r++) {
    const order: ReadonlyArray<TargetName> = r % 2 === 0 ? ["floor", "service"] : ["service", "floor"]
    for (const target of order) {
      const { round, samples } = await measure(target, settings.warmupMs, settings.measureMs)
      latency[target].pushAll(samples)
      rounds.push(round)
      log(
        `round ${r + 1} ${target}: ${round.beatsPerSecond.toFixed(0)} heartbeats/s, ${round.failed} failed` +
          `${round.firstError === undefined ? "" : ` (${round.firstError})`}; CPU: ${target} ${round.targetCpu} %, ` +
          `load generator ${round.loadCpu} %, PostgreSQL ${round.postgresCpu} %, Redis ${round.redisCpu} %`
      )
    }
  }
  return {
    rounds,
    latency: { service: latency.service.summary(), floor: latency.floor.summary() },
    seconds: Math.round((now() - started) / 1000)
  }
}

/**
 * Where a heartbeat's time goes, from `--cpu-prof --source` runs on this machine (2026-11-23, the machine
 * shared with other sessions' work). Kept by hand: re-check them when the request path changes.
 */
const notes = [
  "### Where a heartbeat's time goes",
  "",
  '- History on this machine (CPU per heartbeat of the service): 2,563 µs before the tick batching; 2,060 µs with it; 840 µs once sessions and grants came from the per-instance caches (1,387/s); then, on 2026-11-23 (bench/NOTES.md, "The request path"), the five edge middlewares folded into one (`src/http/Edge.ts`), no esbuild `keepNames`, the session token hashed once and the principal not re-validated, the heartbeat answered by a fast route before the `HttpApi` stack (`src/http/FastHeartbeat.ts`: its plain case only; every other case and every failure goes to the stack, and a test compares both paths\' answers), and the record states of the heartbeats of one event-loop turn read by ONE statement whatever their workspaces (`RecordStore.states`, a `UNION ALL`): 420-475 µs (2,180-2,521 heartbeats/s).',
  "- What a heartbeat costs now: the node:http parse and answer (the floor's ~20-35 µs), one fiber running authentication from the caches (Effect `Cache` lookups), the permission check, the batched record-state read and the batched Redis script, then the answer. The presence work proper (batchers, `EditableRecords`, `Presence`, the store) is under a tenth of the busy time; garbage collection is about a fifth and the Effect fiber runtime about two fifths, spread over those steps with no single hot spot (`--cpu-prof`).",
  "- What would close the gap to 5,000/s (about 150 µs per heartbeat with PostgreSQL, Redis and the load generator on the same two cores): a heartbeat path without a fiber per request (authentication and the permission check answered synchronously from the caches, the batchers fed directly), a record-state cache invalidated by the `changed` hints so that renewals read nothing, and fewer requests from the client (one heartbeat per tab for all its open forms)."
].join("\n")

interface Summary {
  readonly beatsPerSecond: number
  readonly best: number
  readonly worst: number
  readonly targetCpu: number
  readonly loadCpu: number
  readonly postgresCpu: number
  readonly redisCpu: number
  readonly cpuPerBeatUs: number
  readonly failed: number
  readonly latency: Percentiles
}

const summarize = (rounds: ReadonlyArray<Round>, latency: Percentiles): Summary => {
  const mean = (f: (r: Round) => number) => rounds.reduce((n, r) => n + f(r), 0) / Math.max(1, rounds.length)
  const beatsPerSecond = mean((r) => r.beatsPerSecond)
  const targetCpu = mean((r) => r.targetCpu)
  return {
    beatsPerSecond,
    best: Math.max(...rounds.map((r) => r.beatsPerSecond)),
    worst: Math.min(...rounds.map((r) => r.beatsPerSecond)),
    targetCpu,
    loadCpu: mean((r) => r.loadCpu),
    postgresCpu: mean((r) => r.postgresCpu),
    redisCpu: mean((r) => r.redisCpu),
    cpuPerBeatUs: beatsPerSecond === 0 ? 0 : ((targetCpu / 100) * 1e6) / beatsPerSecond,
    failed: rounds.reduce((n, r) => n + r.failed, 0),
    latency
  }
}

const int = (n: number) => Math.round(n).toLocaleString("en-US")

const report = (result: Awaited<ReturnType<typeof runBench>>) => {
  const service = summarize(
    result.rounds.filter((r) => r.target === "service"),
    result.latency.service
  )
  const floor = summarize(
    result.rounds.filter((r) => r.target === "floor"),
    result.latency.floor
  )
  const ratio = floor.beatsPerSecond === 0 ? 0 : service.beatsPerSecond / floor.beatsPerSecond
  const met = service.beatsPerSecond >= 5_000 && service.latency.p99 <= 20
  const row = (label: string, s: Summary) =>
    `| ${label} | ${int(s.beatsPerSecond)} (${int(s.worst)}-${int(s.best)}) | ${formatMs(s.latency.p50)} / ${formatMs(s.latency.p99)} ms | ` +
    `${s.targetCpu.toFixed(0)} % | ${s.cpuPerBeatUs.toFixed(0)} µs | ${s.loadCpu.toFixed(0)} % | ${s.postgresCpu.toFixed(0)} % | ${s.redisCpu.toFixed(0)} % | ${s.failed} |`
  const table = [
    "| target | heartbeats/s, mean (worst-best round) | p50 / p99 | its CPU | its CPU per heartbeat | load generator CPU | PostgreSQL | Redis | failed |",
    "|---|---|---|---|---|---|---|---|---|",
    row("service (compiled)", service),
    row("floor: bare node:http + one ZADD", floor),
    `| **ratio service / floor** | **${ratio.toFixed(2)}×** | p99 ${(service.latency.p99 / Math.max(0.001, floor.latency.p99)).toFixed(1)}× | | ${(service.cpuPerBeatUs / Math.max(1, floor.cpuPerBeatUs)).toFixed(1)}× | | | | |`
  ].join("\n")
  log(`service: ${int(service.beatsPerSecond)} heartbeats/s, latency ${describePercentiles(service.latency)}`)
  log(`floor:   ${int(floor.beatsPerSecond)} heartbeats/s, latency ${describePercentiles(floor.latency)}`)
  log(`ratio service / floor: ${ratio.toFixed(2)}; target >= 5,000/s with p99 <= 20 ms: ${met ? "met" : "missed"}`)
  console.log(table)
  return { table, met, service, floor }
}

let cleaning: Promise<void> | undefined
const cleanUp = () =>
  (cleaning ??= (async () => {
    for (const child of [...children].reverse()) await stopChild(child).catch(() => undefined)
    const runtime = makeRuntime(databaseUrl, redisUrl, 2)
    try {
      const removed = await runtime.runPromise(dropBenchData)
      log(`cleaned up: ${removed.workspaces} workspaces, ${removed.users} users, ${removed.presenceKeys} presence keys`)
    } catch (error) {
      log(`clean-up failed: ${String(error)}`)
    } finally {
      await runtime.dispose().catch(() => undefined)
    }
    for (const file of readdirSync(runDir).filter((f) => f.endsWith(".cpuprofile"))) {
      log(`CPU profile of the service: ${join(runDir, file)}`)
      console.log(summarizeProfile(readFileSync(join(runDir, file), "utf8"), 40))
    }
    if (!cpuProfile) rmSync(runDir, { recursive: true, force: true })
  })())

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => void cleanUp().finally(() => process.exit(130)))
}

try {
  const result = await runBench()
  const { table, met, service } = report(result)
  await cleanUp()
  if (writesReport) {
    const date = new Date().toISOString().slice(0, 10)
    writeBenchmarkSection(
      "Presence",
      [
        "## Presence",
        "",
        `Written by \`npm run bench:presence\` (bench/presence/main.ts) on ${date}; the whole run took ${result.seconds} s.`,
        `Machine: ${cpus().length} cores (${cpus()[0]?.model ?? "unknown"}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, Node ${process.version}; PostgreSQL and Redis on the same machine, sharing its cores with the service and the load generator (other work on the machine falls on both targets alike: they take turns).`,
        "",
        `\`PUT /api/presence/crm/company/<record>/<editor>\` from ${settings.connections} keep-alive connections (${settings.clientProcesses} load-generator processes, requests written by hand), each sending the next heartbeat when the previous one is answered, over ${settings.workspaces * settings.editorsPerWorkspace} editors in ${settings.workspaces} workspaces (one session each); every editor has arrived before the first round, so the heartbeats measured are renewals. ${settings.rounds} rounds of ${settings.measureMs / 1000} s after ${settings.warmupMs / 1000} s of warm-up, the two targets taking turns. Service: the compiled \`dist/server/main.js\` (\`node --max-semi-space-size=4\`, as \`npm start\`), \`LOG_LEVEL=WARN\`. Floor: a bare \`node:http\` server doing one Redis \`ZADD\` per request (bench/presence/bare.ts). CPU from \`/proc\`, 100 % = one core.`,
        "",
        table,
        "",
        `Target ≥ 5,000 heartbeats/s with p99 ≤ 20 ms: **${met ? "met" : "missed"}** (${int(service.beatsPerSecond)}/s, p99 ${formatMs(service.latency.p99)} ms).`,
        "",
        notes,
        ""
      ].join("\n")
    )
    log("wrote the Presence section of BENCHMARKS.md")
  }
  process.exit(0)
} catch (error) {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  await cleanUp()
  process.exit(1)
}
