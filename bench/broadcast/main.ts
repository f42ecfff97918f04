/**
 * `npm run bench:broadcast`: the broadcast and presence benchmark, in one run
 * on this machine. See BENCHMARKS.md, section "Broadcast", for what it
 * measures; the numbers land there.
 *
 * Processes: this orchestrator; the service (`node --import tsx src/main.ts`)
 * on a free port; a bare `node:http` SSE server (bare.ts) for the RSS
 * comparison; the load generator (load.ts), driven over IPC. Data is made
 * through the domain services (setup.ts) and dropped at the end, also after a
 * failure or Ctrl-C.
 *
 * Then the cluster pass: a Redis Cluster of the bench's own (benchCluster.ts: 3 masters, 3 replicas),
 * a fresh service with `REDIS_CLUSTER_NODES`, the bare server SSUBSCRIBEd to the 16 partition
 * channels, a load generator saving through the bus on the cluster: the floor, the bare spread and
 * the spread again, printed beside the single Redis's (sideBySide.ts).
 *
 * Options: `--only=floor,rss,bare-spread,sweep,spread,presence,hot,cluster` runs a subset (`cluster`:
 * the cluster pass; `--only=cluster` runs it alone);
 * `--sweep-rates=10,25` sets the save rates of the capacity sweep; `--cpu-prof`
 * starts the service with `--cpu-prof` (profile written to the run's
 * directory and summarized); `--quick` scales everything down (a smoke test);
 * `--rss-steps=500,2000` sets the stream counts of the RSS phase;
 * `--heap-snapshots` writes a heap snapshot of each process (hooks.mjs) at
 * the RSS phase's baseline and at each step, into the run's directory, for
 * `bench/broadcast/heapDiff.ts`; `--memory-detail` logs where each RSS reading's
 * memory is (V8 heap spaces, external), from the process itself.
 * BENCHMARKS.md is written only by a full, default run; `--report-from=<results.json>`
 * re-renders the section from a run's saved results.
 */
import { fork, spawn, spawnSync } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { cpus, tmpdir, totalmem } from "node:os"
import { join, resolve } from "node:path"
import { pathToFileURL } from "node:url"
import { Effect, Option, Redacted, Schema } from "effect"
import { channelsOf } from "../../src/broadcast/BroadcastBusRedis"
import { partitionChannels } from "../../src/broadcast/hintPartitions"
import { redisPrefixOf } from "../../src/config/AppConfig"
import { closeBenchClusters, startBenchCluster } from "./benchCluster"
import type { BenchRedis, DoneResult, FloorResult, OpenResult, Plan, PresenceResult, SavesResult } from "./protocol"
import { PlanJson, Reply } from "./protocol"
import type { Command } from "./protocol"
import { summarizeProfile } from "./profile"
import { describeRedis, redisEnv } from "./redisTarget"
import { ResultsJson, writeReport } from "./report"
import type { CpuShare, QuietCheck, Results, RssStep } from "./report"
import { sideBySide } from "./sideBySide"
import type { BenchWorkspace } from "./setup"
import { businessObject, createBenchData, dropBenchData, emailOf, makeRuntime, password, slugPrefix } from "./setup"
import { cpuTicks, describePercentiles, machineTicks, now, pidsByComm, rssKiB, sleep, ticksPerSecond } from "./stats"
import { freePort } from "../freePort"

const repo = resolve(import.meta.dirname, "../..")
const databaseUrl =
  process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379"

const argv = process.argv.slice(2)
const flag = (name: string) => argv.includes(`--${name}`)
const onlyArg = argv.find((a) => a.startsWith("--only="))?.slice("--only=".length)
const phases = new Set(
  onlyArg === undefined ? ["floor", "rss", "bare-spread", "sweep", "spread", "hot", "cluster"] : onlyArg.split(",")
)
/** What the cluster pass measures, on a Redis Cluster of the bench's own, beside the same phases on the single Redis. */
const clusterPhases = new Set(["floor", "bare-spread", "spread"])
const quick = flag("quick")
const sweepRatesArg = argv.find((a) => a.startsWith("--sweep-rates="))?.slice("--sweep-rates=".length)
const cpuProfile = flag("cpu-prof")
const rssStepsArg = argv.find((a) => a.startsWith("--rss-steps="))?.slice("--rss-steps=".length)
const heapSnapshots = flag("heap-snapshots")
const memoryDetail = flag("memory-detail")
const fromSource = flag("source")
/** The service's default Redis prefix for this database: its hint channels, which the bare server subscribes to. */
const servicePrefix = redisPrefixOf({
  redisPrefix: Option.none(),
  databaseUrl: Option.some(Redacted.make(databaseUrl))
})
const hintChannelsOf = (redis: BenchRedis) =>
  redis._tag === "Single" ? [channelsOf(servicePrefix).hints] : partitionChannels(servicePrefix)
const singleRedis: BenchRedis = { _tag: "Single", url: redisUrl }
const writesReport =
  onlyArg === undefined && sweepRatesArg === undefined && rssStepsArg === undefined && !quick && !cpuProfile

const settings = {
  workspaces: quick ? 10 : 100,
  streamsPerWorkspace: quick ? 20 : 100,
  rssSteps: rssStepsArg?.split(",").map(Number) ?? (quick ? [50, 100, 200] : [1_000, 5_000, 10_000]),
  /** How long the streams idle before their RSS is read (V8's memory reducer runs about 8 s into an idle spell). */
  rssIdleMs: quick ? 10_000 : 30_000,
  spreadRate: quick ? 50 : 500,
  hotStreams: quick ? 100 : 1_000,
  hotRate: 50,
  recordPool: 100,
  warmupMs: quick ? 2_000 : 3_000,
  spreadMeasureMs: quick ? 5_000 : 20_000,
  hotMeasureMs: quick ? 5_000 : 15_000,
  /** Saves/s of the capacity sweep over the spread layout: where does p99 stay under the target? */
  sweepRates: sweepRatesArg?.split(",").map(Number) ?? (quick ? [10, 20] : [50, 100, 200, 300, 400]),
  sweepWarmupMs: 2_000,
  sweepMeasureMs: quick ? 4_000 : 8_000,
  drainMs: 3_000,
  floorPings: quick ? 200 : 2_000,
  floorRateUnderLoad: 20,
  presenceConcurrency: 64,
  presenceEditorsPerWorkspace: 20,
  presenceWarmupMs: 2_000,
  presenceMeasureMs: quick ? 4_000 : 10_000
}

const log = (line: string) => console.log(`[bench:broadcast] ${line}`)
const kib = (value: number) => `${(value / 1024).toFixed(1)} MiB`

// ---------------------------------------------------------------------------
// Processes

const runDir = mkdtempSync(join(tmpdir(), "bench-broadcast-"))
const children: Array<ChildProcess> = []

const hooks = pathToFileURL(join(import.meta.dirname, "hooks.mjs")).href
/** The bare server is TypeScript: it runs through tsx. */
const bareFlags = ["--expose-gc", "--import", "tsx", "--import", hooks]
/** The compiled service, as `npm start` runs it (`--source`: src/main.ts through tsx, for a profile with names). */
const serviceArgs = fromSource
  ? ["--expose-gc", "--import", "tsx", "--import", hooks, "src/main.ts"]
  : ["--expose-gc", "--max-semi-space-size=4", "--import", hooks, "dist/server/main.js"]

const startServer = (port: number, redis: BenchRedis, logName: string) => {
  const logFile = openSync(join(runDir, logName), "a")
  const child = spawn(
    process.execPath,
    [...(cpuProfile ? ["--cpu-prof", `--cpu-prof-dir=${runDir}`] : []), ...serviceArgs],
    {
      cwd: repo,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        ...redisEnv(redis),
        HOST: "127.0.0.1",
        PORT: String(port),
        // Effect's labels (ALL, FATAL, ERROR, WARN, INFO, DEBUG, TRACE, NONE): "Warning" is refused at start-up.
        LOG_LEVEL: "WARN",
        DATABASE_POOL_SIZE: "10",
        BROADCAST_KEEPALIVE_MS: String(60 * 60 * 1000),
        // One session holds all the streams of its workspace, and all sessions sign in at once from here.
        MAX_STREAMS_PER_SESSION: "1000000",
        LOGIN_MAX_PER_ADDRESS: "1000000"
      },
      stdio: ["ignore", logFile, logFile, "ipc"]
    }
  )
  children.push(child)
  return child
}

const startBare = (redis: BenchRedis) =>
  new Promise<{ child: ChildProcess; port: number }>((resolveBare, reject) => {
    const child = fork(join(import.meta.dirname, "bare.ts"), [], {
      cwd: repo,
      execArgv: bareFlags,
      stdio: "inherit",
      env: {
        ...process.env,
        ...(redis._tag === "Single" ? { BENCH_REDIS_URL: redis.url } : { BENCH_REDIS_CLUSTER_NODES: redis.nodes }),
        BENCH_HINTS_CHANNELS: hintChannelsOf(redis).join(",")
      }
    })
    children.push(child)
    const timer = setTimeout(() => reject(new Error("bare server did not start within 30 s")), 30_000)
    child.once("message", (message: unknown) => {
      clearTimeout(timer)
      const port = typeof message === "object" && message !== null && "port" in message ? Number(message.port) : NaN
      if (Number.isNaN(port)) reject(new Error(`bare server said ${JSON.stringify(message)}`))
      else resolveBare({ child, port })
    })
    child.once("exit", (code) => reject(new Error(`bare server exited (${code})`)))
  })

const waitHealthy = async (port: number, child: ChildProcess, logName: string) => {
  const deadline = now() + 90_000
  while (now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the service exited (${child.exitCode}); see ${join(runDir, logName)}`)
    try {
      const response = await fetch(`http://127.0.0.1:${port}/api/health`)
      if (response.status === 200) return
    } catch {
      // not listening yet
    }
    await sleep(250)
  }
  throw new Error("the service did not become healthy within 90 s")
}

const stopChild = async (child: ChildProcess, signal: NodeJS.Signals = "SIGTERM", graceMs = 15_000) => {
  if (child.exitCode !== null || child.signalCode !== null) return
  const exited = new Promise<void>((done) => child.once("exit", () => done()))
  child.kill(signal)
  // Writing a CPU profile at exit takes a while.
  const timeout = sleep(cpuProfile ? 90_000 : graceMs).then(() => "timeout" as const)
  if ((await Promise.race([exited, timeout])) === "timeout") {
    child.kill("SIGKILL")
    await exited
  }
}

/** Signs in over HTTP; the `session=...` pair of the answer. */
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

// ---------------------------------------------------------------------------
// The load generator over IPC

interface LoadClient {
  readonly child: ChildProcess
  readonly run: (command: Command) => Promise<DoneResult>
}

type Window = { readonly phase: string; readonly edge: "start" | "end" }

const startLoad = (planPath: string, onWindow: (window: Window) => void) =>
  new Promise<LoadClient>((resolveLoad, reject) => {
    const child = fork(join(import.meta.dirname, "load.ts"), [planPath], {
      cwd: repo,
      execArgv: ["--import", "tsx"],
      stdio: "inherit"
    })
    children.push(child)
    const pending = new Map<number, { resolve: (result: DoneResult) => void; reject: (error: Error) => void }>()
    child.on("message", (raw: unknown) => {
      const decoded = Schema.decodeUnknownResult(Reply)(raw)
      if (decoded._tag === "Failure") return log(`load generator said something undecodable: ${JSON.stringify(raw)}`)
      const reply = decoded.success
      switch (reply._tag) {
        case "Ready":
          return resolveLoad({
            child,
            run: (command) =>
              new Promise<DoneResult>((resolveRun, rejectRun) => {
                const timer = setTimeout(() => rejectRun(new Error(`load: ${command._tag} took over 240 s`)), 240_000)
                pending.set(command.id, {
                  resolve: (result) => {
                    clearTimeout(timer)
                    resolveRun(result)
                  },
                  reject: (error) => {
                    clearTimeout(timer)
                    rejectRun(error)
                  }
                })
                child.send(command)
              })
          })
        case "Window":
          return onWindow(reply)
        case "Done":
          pending.get(reply.id)?.resolve(reply.result)
          return pending.delete(reply.id)
        case "Failed":
          if (reply.id < 0) return reject(new Error(reply.message))
          pending.get(reply.id)?.reject(new Error(reply.message))
          return pending.delete(reply.id)
      }
    })
    child.once("exit", (code) => {
      const error = new Error(`load generator exited (${code})`)
      reject(error)
      for (const waiting of pending.values()) waiting.reject(error)
      pending.clear()
    })
  })

let commandId = 1
const nextId = () => commandId++

const expectResult = <T extends DoneResult["_tag"]>(result: DoneResult, tag: T): Extract<DoneResult, { _tag: T }> => {
  if (result._tag !== tag) throw new Error(`expected a ${tag} result, got ${result._tag}`)
  return result as Extract<DoneResult, { _tag: T }>
}

// ---------------------------------------------------------------------------
// Measurements taken here

/** Asks for a full GC (hooks.mjs), then waits until RSS holds still: 6 samples 0.5 s apart within 0.5 % or 256 KiB. */
const settledRss = async (pid: number) => {
  process.kill(pid, "SIGUSR2")
  await sleep(500)
  const samples: Array<number> = []
  const deadline = now() + 30_000
  for (;;) {
    const rss = rssKiB(pid)
    if (rss === undefined) throw new Error(`process ${pid} is gone`)
    samples.push(rss)
    const recent = samples.slice(-6)
    const spread = Math.max(...recent) - Math.min(...recent)
    if ((recent.length === 6 && spread <= Math.max(256, rss * 0.005)) || now() > deadline) return rss
    await sleep(500)
  }
}

interface CpuSnapshot {
  readonly at: number
  readonly ticks: ReadonlyMap<string, number>
  readonly machine: { busy: number; total: number }
}

const groups = (pids: { server: number; load: number }) => ({
  server: [pids.server],
  "load generator": [pids.load],
  postgres: pidsByComm("postgres"),
  redis: pidsByComm("redis-server")
})

const snapshotCpu = (pids: { server: number; load: number }): CpuSnapshot => {
  const ticks = new Map<string, number>()
  for (const [name, list] of Object.entries(groups(pids))) {
    for (const pid of list) ticks.set(`${name}:${pid}`, cpuTicks(pid))
  }
  return { at: now(), ticks, machine: machineTicks() }
}

const cpuBetween = (start: CpuSnapshot, end: CpuSnapshot): CpuShare => {
  const seconds = (end.at - start.at) / 1000
  const byGroup: Record<string, number> = {}
  for (const [key, value] of end.ticks) {
    const before = start.ticks.get(key)
    if (before === undefined) continue
    const group = key.slice(0, key.lastIndexOf(":"))
    byGroup[group] = (byGroup[group] ?? 0) + value - before
  }
  const percent = (ticks: number) => Math.round((ticks / ticksPerSecond / seconds) * 100)
  const machine = end.machine.total - start.machine.total
  const share = {
    server: percent(byGroup.server ?? 0),
    loadGenerator: percent(byGroup["load generator"] ?? 0),
    postgres: percent(byGroup.postgres ?? 0),
    redis: percent(byGroup.redis ?? 0),
    machineBusy:
      machine === 0 ? 0 : Math.round(((end.machine.busy - start.machine.busy) / machine) * 100 * cpus().length)
  }
  return {
    ...share,
    others: Math.max(0, share.machineBusy - share.server - share.loadGenerator - share.postgres - share.redis)
  }
}

/** Waits (at most 60 s) until a process uses under 5 % of a core over a second. */
const waitIdle = async (pid: number) => {
  const deadline = now() + 60_000
  for (;;) {
    const before = cpuTicks(pid)
    await sleep(1_000)
    if (cpuTicks(pid) - before <= 5 || now() > deadline) return
  }
}

/** Percent of one core the whole machine is busy over `ms`. */
const machineBusyOver = async (ms: number) => {
  const start = machineTicks()
  await sleep(ms)
  const end = machineTicks()
  const total = end.total - start.total
  return total === 0 ? 0 : Math.round(((end.busy - start.busy) / total) * 100 * cpus().length)
}

/**
 * Waits (up to `maxMs`) until the machine is nearly idle, so that a phase does
 * not start while something else (another test run) holds the cores. What it
 * found is reported; the phase runs anyway after the wait.
 */
const waitForQuiet = async (phase: string): Promise<QuietCheck> => {
  const started = now()
  const maxMs = Math.min(60_000, quietBudgetMs)
  let busy = await machineBusyOver(2_000)
  while (busy > quietBelow && now() - started < maxMs) {
    log(
      `${phase}: the machine is ${busy} % busy (of ${cpus().length * 100} %) before the phase: waiting for it to calm down`
    )
    busy = await machineBusyOver(5_000)
  }
  if (busy > quietBelow) log(`${phase}: still ${busy} % busy after ${Math.round(maxMs / 1000)} s: measuring anyway`)
  quietBudgetMs = Math.max(0, quietBudgetMs - (now() - started))
  return { phase, busyPercent: busy, waitedSeconds: Math.round((now() - started) / 1000) }
}
const quietBelow = 25
/** All the waiting for a quiet machine one run may do, so that it still ends within about ten minutes. */
let quietBudgetMs = 90_000

const describeCpu = (cpu: CpuShare) =>
  `CPU (100 % = one core, ${cpus().length} cores): server ${cpu.server} %, load generator ${cpu.loadGenerator} %, ` +
  `PostgreSQL ${cpu.postgres} %, Redis ${cpu.redis} %, other processes ${cpu.others} %, whole machine ${cpu.machineBusy} %`

// ---------------------------------------------------------------------------

const emptyResults = (started: Date): Results => ({
  date: started.toISOString(),
  machine: {
    cores: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round((totalmem() / 1024 ** 3) * 10) / 10,
    node: process.version
  },
  settings: {
    workspaces: settings.workspaces,
    streamsPerWorkspace: settings.streamsPerWorkspace,
    spreadRate: settings.spreadRate,
    hotStreams: settings.hotStreams,
    hotRate: settings.hotRate,
    warmupMs: settings.warmupMs,
    spreadMeasureMs: settings.spreadMeasureMs,
    hotMeasureMs: settings.hotMeasureMs,
    sweepMeasureMs: settings.sweepMeasureMs,
    presenceConcurrency: settings.presenceConcurrency,
    presenceMeasureMs: settings.presenceMeasureMs
  },
  rss: [],
  sweep: [],
  churn: [],
  cpu: {},
  quiet: [],
  durationSeconds: 0
})

const runBench = async (): Promise<Results> => {
  const started = new Date()
  const results = emptyResults(started)

  if (!fromSource) {
    const built = spawnSync(process.execPath, ["scripts/build-if-stale.mjs"], { cwd: repo, stdio: "inherit" })
    if (built.status !== 0) throw new Error("the build failed")
  }
  // 1. Data, through the domain services.
  log(
    `setting up ${settings.workspaces} workspaces ${slugPrefix}<n>, each with one admin user and ${settings.recordPool} records`
  )
  const setupRuntime = makeRuntime(databaseUrl, redisUrl, 5)
  const created = await setupRuntime
    .runPromise(
      Effect.gen(function* () {
        const leftovers = yield* dropBenchData
        if (leftovers.workspaces + leftovers.users > 0) {
          yield* Effect.log(`removed leftovers of an earlier run: ${JSON.stringify(leftovers)}`)
        }
        return yield* createBenchData(settings.workspaces, settings.recordPool)
      })
    )
    .finally(() => setupRuntime.dispose())

  if (phases.size > (phases.has("cluster") ? 1 : 0)) await runPass(results, results, created, "", singleRedis, phases)
  if (phases.has("cluster")) {
    log("cluster pass: starting a Redis Cluster of 3 masters and 3 replicas (test/support/ownRedisCluster.ts)")
    const cluster = await startBenchCluster()
    const into = emptyResults(started)
    const redis: BenchRedis = { _tag: "Cluster", nodes: cluster.startupNodes }
    try {
      await runPass(results, into, created, "cluster ", redis, clusterPhases)
    } finally {
      await cluster.close()
    }
    results.cluster = {
      startSeconds: cluster.startSeconds,
      floorIdle: into.floorIdle,
      bareSpread: into.bareSpread,
      spread: into.spread,
      serverLogLines: into.serverLogLines
    }
    for (const line of sideBySide(results)) log(line)
  }
  results.durationSeconds = Math.round((Date.now() - started.getTime()) / 1000)
  return results
}

/**
 * One pass over `redis`: the service and the bare server on it, the load generator, then `passPhases`.
 * Measurements go to `into`, CPU shares and quiet checks to `results` (under phase names starting with
 * `label`). The service is restarted between groups of phases (see below), always on the same port: an
 * overloaded phase leaves a backlog behind that would otherwise spill into the next one.
 */
const runPass = async (
  results: Results,
  into: Results,
  created: ReadonlyArray<BenchWorkspace>,
  label: string,
  redis: BenchRedis,
  passPhases: ReadonlySet<string>
) => {
  const logName = `server${label === "" ? "" : `-${label.trim()}`}.log`
  const serverPort = await freePort()
  let server = startServer(serverPort, redis, logName)
  await waitHealthy(serverPort, server, logName)
  const pids = { server: server.pid ?? 0, load: 0 }
  log(
    `${label}service pid ${pids.server} on port ${serverPort}, ${describeRedis(redis)} (log: ${join(runDir, logName)})`
  )
  const bare = await startBare(redis)
  const barePid = bare.child.pid ?? 0
  log(`bare node:http SSE server pid ${barePid} on port ${bare.port}`)

  const cookies = await Promise.all(created.map((entry, i) => signIn(serverPort, entry.workspace.slug, emailOf(i + 1))))
  const plan: Plan = {
    databaseUrl,
    redis,
    serverPort,
    barePort: bare.port,
    businessObject,
    workspaces: created.map((entry, i) => ({
      id: entry.workspace.id,
      slug: entry.workspace.slug,
      name: entry.workspace.name,
      user: entry.user,
      cookie: cookies[i] ?? "",
      recordIds: entry.recordIds
    }))
  }
  const planPath = join(runDir, `plan${label === "" ? "" : "-cluster"}.json`)
  writeFileSync(planPath, Schema.encodeSync(PlanJson)(plan), { mode: 0o600 })

  // 3. The load generator; CPU shares are taken between its window edges.
  let windowStart: CpuSnapshot | undefined
  const load = await startLoad(planPath, (window) => {
    log(`${window.phase}: measuring window ${window.edge === "start" ? "opens" : "closes"}`)
    if (window.edge === "start") {
      windowStart = snapshotCpu(pids)
    } else if (windowStart !== undefined) {
      results.cpu[window.phase] = cpuBetween(windowStart, snapshotCpu(pids))
      windowStart = undefined
    }
  })
  pids.load = load.child.pid ?? 0
  log(`load generator pid ${pids.load}`)

  const pidOf = (target: "server" | "bare") => (target === "server" ? pids.server : barePid)
  const open = async (target: "server" | "bare", perWorkspace: ReadonlyArray<number>): Promise<OpenResult> => {
    const ticks = cpuTicks(pidOf(target))
    const result = expectResult(await load.run({ _tag: "Open", id: nextId(), target, perWorkspace }), "Open").value
    await waitIdle(pidOf(target))
    const cpuSeconds = (cpuTicks(pidOf(target)) - ticks) / ticksPerSecond
    if (result.failed > 0) log(`${target}: ${result.failed} streams failed to open (${result.firstError ?? "?"})`)
    if (result.opened >= 1_000) {
      into.churn.push({ target, action: "open", streams: result.opened, seconds: result.seconds, cpuSeconds })
      log(
        `${target}: opening ${result.opened} streams took ${result.seconds.toFixed(1)} s and ${cpuSeconds.toFixed(1)} s of its CPU`
      )
    }
    return result
  }
  /** Closes every stream of `target`, then waits until the process is idle again (closing is not free). */
  const closeAll = async (target: "server" | "bare", streams: number) => {
    const ticks = cpuTicks(pidOf(target))
    const started = now()
    await load.run({ _tag: "CloseAll", id: nextId(), target })
    await waitIdle(pidOf(target))
    const seconds = (now() - started) / 1000
    const cpuSeconds = (cpuTicks(pidOf(target)) - ticks) / ticksPerSecond
    if (streams >= 1_000) {
      into.churn.push({ target, action: "close", streams, seconds, cpuSeconds })
      log(
        `${target}: closing ${streams} streams took ${seconds.toFixed(1)} s and ${cpuSeconds.toFixed(1)} s of its CPU`
      )
    }
  }
  /** A fresh service: the streams are dropped on the client side first, the old process is stopped (killed after 10 s). */
  const restartServer = async () => {
    await load.run({ _tag: "CloseAll", id: nextId(), target: "server" })
    await stopChild(server, "SIGTERM", 10_000)
    server = startServer(serverPort, redis, logName)
    await waitHealthy(serverPort, server, logName)
    pids.server = server.pid ?? 0
    log(`${label}service restarted: pid ${pids.server}`)
  }
  const spreadEvenly = (total: number) =>
    Array.from(
      { length: settings.workspaces },
      (_, i) => Math.floor(total / settings.workspaces) + (i < total % settings.workspaces ? 1 : 0)
    )
  const allWorkspaces = Array.from({ length: settings.workspaces }, (_, i) => i)
  const fullSpread = settings.workspaces * settings.streamsPerWorkspace
  const saves = async (
    phase: string,
    rate: number,
    workspaces: ReadonlyArray<number>,
    warmupMs: number,
    measureMs: number,
    floorRate: number,
    target: "server" | "bare" = "server"
  ) =>
    expectResult(
      await load.run({
        _tag: "Saves",
        id: nextId(),
        phase,
        target,
        rate,
        workspaces,
        warmupMs,
        measureMs,
        drainMs: settings.drainMs,
        floorRate
      }),
      "Saves"
    ).value

  /** The floor of the spread load: the same saves over the same number of streams, on the bare server. */
  const bareSpread = async () => {
    await open("bare", spreadEvenly(fullSpread))
    results.quiet.push(await waitForQuiet(`${label}bare spread`))
    log(`${label}bare spread: ${fullSpread} streams open on the bare server; ${settings.spreadRate} saves/s`)
    // The CPU column "service" is the bare server's during this phase.
    const servicePid = pids.server
    pids.server = barePid
    try {
      const result = await saves(
        `${label}bare spread`,
        settings.spreadRate,
        allWorkspaces,
        settings.warmupMs,
        settings.spreadMeasureMs,
        settings.floorRateUnderLoad,
        "bare"
      )
      into.bareSpread = result
      printSaves(result)
    } finally {
      pids.server = servicePid
    }
    const cpu = results.cpu[`${label}bare spread`]
    if (cpu !== undefined) log(`${label}bare spread: ${describeCpu(cpu).replace("server", "bare server")}`)
  }

  // 4. Floor, idle.
  if (passPhases.has("floor")) {
    results.quiet.push(await waitForQuiet(`${label}floor`))
    const floor: FloorResult = expectResult(
      await load.run({ _tag: "Floor", id: nextId(), count: settings.floorPings }),
      "Floor"
    ).value
    into.floorIdle = floor.latencyMs
    log(
      `${label}Redis ${redis._tag === "Single" ? "PUBLISH -> SUBSCRIBE" : "SPUBLISH -> SSUBSCRIBE"} round trip, idle: ${describePercentiles(floor.latencyMs)}`
    )
  }

  // 5. RSS per idle stream: bare server first (its sockets are closed before the service's are opened).
  if (passPhases.has("rss")) {
    results.quiet.push(await waitForQuiet(`${label}rss`))
    /** Asks `target` (hooks.mjs) for `request`; its answer's `key`. */
    const ask = (target: "server" | "bare", request: object, key: string) => {
      const child = target === "server" ? server : bare.child
      const answered = new Promise<unknown>((done) => {
        const onMessage = (message: unknown) => {
          if (typeof message !== "object" || message === null || !(key in message)) return
          child.off("message", onMessage)
          done((message as Record<string, unknown>)[key])
        }
        child.on("message", onMessage)
      })
      child.send(request)
      return answered
    }
    /** A heap snapshot of `target`, after its RSS settled; where its memory is first. */
    const snapshot = async (target: "server" | "bare", name: string) => {
      if (memoryDetail || heapSnapshots) log(`${target}: ${String(await ask(target, { memory: true }, "memory"))}`)
      if (!heapSnapshots) return
      const path = join(runDir, `${target}-${name}.heapsnapshot`)
      await ask(target, { heapSnapshot: path }, "heapSnapshot")
      log(`${target}: heap snapshot ${path}`)
    }
    const measure = async (target: "server" | "bare", pid: number) => {
      // Warm-up: code paths compiled and pools grown once, so the baseline holds what every stream shares.
      await open(target, spreadEvenly(Math.min(500, settings.rssSteps[0] ?? 500)))
      await closeAll(target, 0)
      // Read as the steps are: after the same idle wait (V8 shrinks its new space too when idle).
      await sleep(settings.rssIdleMs)
      const baseline = await settledRss(pid)
      log(`${target}: RSS ${kib(baseline)} with no streams`)
      await snapshot(target, "0")
      const steps: Array<{ streams: number; rssKiB: number; perStreamKiB: number; atOnceKiB: number }> = []
      for (const streams of settings.rssSteps) {
        const opened = await open(target, spreadEvenly(streams))
        const atOnce = await settledRss(pid)
        const atOnceKiB = (atOnce - baseline) / opened.open
        log(`${target}: ${opened.open} streams just opened: RSS ${kib(atOnce)}, ${atOnceKiB.toFixed(1)} KiB per stream`)
        if (memoryDetail) log(`${target}: ${String(await ask(target, { memory: true }, "memory"))}`)
        // Idle streams: V8 gives back, within seconds of idling, the heap pages a burst of openings left sparse.
        await sleep(settings.rssIdleMs)
        const rss = await settledRss(pid)
        const perStreamKiB = (rss - baseline) / opened.open
        steps.push({ streams: opened.open, rssKiB: rss, perStreamKiB, atOnceKiB })
        log(
          `${target}: ${opened.open} idle streams (${settings.rssIdleMs / 1000} s later): RSS ${kib(rss)}, ${perStreamKiB.toFixed(1)} KiB per stream`
        )
        await snapshot(target, String(opened.open))
      }
      return { baseline, steps }
    }
    const bareRss = await measure("bare", barePid)
    // Its streams are open: the spread floor runs on them now, before the service holds any.
    if (passPhases.has("bare-spread")) await bareSpread()
    await closeAll("bare", 0)
    const serverRss = await measure("server", pids.server)
    into.rss = serverRss.steps.map((step, i): RssStep => {
      const bareStep = bareRss.steps[i]
      return {
        streams: step.streams,
        serverKiB: step.perStreamKiB,
        bareKiB: bareStep?.perStreamKiB ?? 0,
        ratio: bareStep === undefined || bareStep.perStreamKiB <= 0 ? 0 : step.perStreamKiB / bareStep.perStreamKiB,
        serverRssKiB: step.rssKiB,
        bareRssKiB: bareStep?.rssKiB ?? 0,
        serverAtOnceKiB: step.atOnceKiB,
        bareAtOnceKiB: bareStep?.atOnceKiB ?? 0
      }
    })
    into.rssBaseline = { serverKiB: serverRss.baseline, bareKiB: bareRss.baseline }
  }
  if (passPhases.has("bare-spread") && !passPhases.has("rss")) {
    await bareSpread()
    await closeAll("bare", 0)
  }
  await stopChild(bare.child)

  // 6. Capacity sweep over the spread layout, lowest rate first, on the streams of the RSS phase.
  if (passPhases.has("sweep")) {
    await open("server", spreadEvenly(fullSpread))
    results.quiet.push(await waitForQuiet(`${label}sweep`))
    for (const rate of settings.sweepRates) {
      await waitIdle(pids.server)
      const step = await saves(
        `sweep ${rate}/s`,
        rate,
        allWorkspaces,
        settings.sweepWarmupMs,
        settings.sweepMeasureMs,
        0
      )
      into.sweep.push(step)
      log(
        `sweep: ${rate} saves/s over ${step.streams} streams: ${step.deliveriesPerSecond.toFixed(0)} deliveries/s arrived, ` +
          `${step.lostDeliveries} of ${step.expectedDeliveries} lost; commit -> receipt ${describePercentiles(step.commitToReceiptMs)}`
      )
      const cpu = results.cpu[`sweep ${rate}/s`]
      if (cpu !== undefined) log(`${label}sweep ${rate}/s: ${describeCpu(cpu)}`)
    }
  }

  // 7. Spread load on a fresh service: every workspace, streamsPerWorkspace streams each.
  if (passPhases.has("spread")) {
    if (passPhases.has("sweep")) await restartServer()
    await open("server", spreadEvenly(fullSpread))
    results.quiet.push(await waitForQuiet(`${label}spread`))
    log(
      `${label}spread: ${fullSpread} streams open; ${settings.spreadRate} saves/s for ${settings.warmupMs / 1000} s warm-up + ${settings.spreadMeasureMs / 1000} s`
    )
    const spread = await saves(
      `${label}spread`,
      settings.spreadRate,
      allWorkspaces,
      settings.warmupMs,
      settings.spreadMeasureMs,
      settings.floorRateUnderLoad
    )
    into.spread = spread
    printSaves(spread)
    const cpu = results.cpu[`${label}spread`]
    if (cpu !== undefined) log(`${label}spread: ${describeCpu(cpu)}`)
  }

  // 8. A fresh service for presence (no streams), then the hot workspace.
  if (passPhases.has("presence") || passPhases.has("hot")) {
    if (passPhases.has("sweep") || passPhases.has("spread")) await restartServer()
    else await closeAll("server", 0)
  }
  if (passPhases.has("presence")) {
    results.quiet.push(await waitForQuiet(`${label}presence`))
    const presence: PresenceResult = expectResult(
      await load.run({
        _tag: "Presence",
        id: nextId(),
        concurrency: settings.presenceConcurrency,
        editorsPerWorkspace: settings.presenceEditorsPerWorkspace,
        warmupMs: settings.presenceWarmupMs,
        measureMs: settings.presenceMeasureMs
      }),
      "Presence"
    ).value
    into.presence = presence
    log(
      `presence: ${presence.perSecond.toFixed(0)} heartbeats/s sustained (${presence.concurrency} in flight, ` +
        `${presence.editors} editors, ${presence.failed} failed${presence.firstError ? `: ${presence.firstError}` : ""}); ` +
        `latency ${describePercentiles(presence.latencyMs)}; ${presence.left} editors left afterwards`
    )
    const cpu = results.cpu[`${label}presence`]
    if (cpu !== undefined) log(`${label}presence: ${describeCpu(cpu)}`)
  }
  if (passPhases.has("hot")) {
    await open(
      "server",
      Array.from({ length: settings.workspaces }, (_, i) => (i === 0 ? settings.hotStreams : 0))
    )
    results.quiet.push(await waitForQuiet(`${label}hot`))
    log(`${label}hot: ${settings.hotStreams} streams open in ${slugPrefix}1; ${settings.hotRate} saves/s`)
    const hot = await saves(
      `${label}hot`,
      settings.hotRate,
      [0],
      settings.warmupMs,
      settings.hotMeasureMs,
      settings.floorRateUnderLoad
    )
    into.hot = hot
    printSaves(hot)
    const cpu = results.cpu[`${label}hot`]
    if (cpu !== undefined) log(`${label}hot: ${describeCpu(cpu)}`)
  }

  await load.run({ _tag: "Exit", id: nextId() }).catch(() => undefined)
  await stopChild(load.child)
  await stopChild(server, "SIGTERM", 10_000)
  rmSync(planPath, { force: true })
  const serverLog = readFileSync(join(runDir, logName), "utf8")
    .split("\n")
    .filter((line) => line.trim().length > 0)
  into.serverLogLines = serverLog.length
  if (serverLog.length > 0) {
    log(`${label}the service logged ${serverLog.length} warning/error lines; the first: ${serverLog[0]?.slice(0, 300)}`)
  }
}

const printSaves = (r: SavesResult) => {
  log(
    `${r.phase}: ${r.streams} streams, saves ${r.achievedRate.toFixed(1)}/s of ${r.targetRate}/s ` +
      `(${r.measuredSaves} in ${r.windowSeconds} s, ${r.failedSaves} failed, ${r.throttledSaves} throttled)`
  )
  log(`${r.phase}: commit -> receipt ${describePercentiles(r.commitToReceiptMs)}`)
  log(
    `${r.phase}: deliveries ${r.deliveriesPerSecond.toFixed(0)}/s achieved; received ${r.receivedDeliveries} of ` +
      `${r.expectedDeliveries} expected (${r.lostDeliveries} lost); ${r.strayReceipts} stray, ${r.earlyReceipts} early, ` +
      `${r.droppedStreams} streams dropped`
  )
  log(`${r.phase}: save BEGIN..COMMIT ${describePercentiles(r.saveDurationMs)}`)
  log(`${r.phase}: Redis publish -> message round trip meanwhile: ${describePercentiles(r.floorUnderLoadMs)}`)
  log(`${r.phase}: reader threads' event-loop utilization ${r.readerUtilization.map((u) => `${u} %`).join(", ")}`)
  log(
    `${r.phase}: load generator event-loop delay p50 ${r.loopDelayMs.p50.toFixed(1)} ms, p99 ${r.loopDelayMs.p99.toFixed(1)} ms, max ${r.loopDelayMs.max.toFixed(1)} ms`
  )
}

// ---------------------------------------------------------------------------
// Clean-up, whatever happened

/** The plans hold session cookies: never left behind. */
const removePlans = () => {
  for (const file of readdirSync(runDir).filter((f) => f.startsWith("plan")))
    rmSync(join(runDir, file), { force: true })
}

let cleaning: Promise<void> | undefined
let succeeded = false
const cleanUp = () =>
  (cleaning ??= (async () => {
    for (const child of [...children].reverse()) await stopChild(child).catch(() => undefined)
    await closeBenchClusters().catch(() => undefined)
    const runtime = makeRuntime(databaseUrl, redisUrl, 2)
    try {
      const removed = await runtime.runPromise(dropBenchData)
      log(
        `cleaned up: ${removed.workspaces} workspaces, ${removed.users} users, ${removed.presenceKeys} presence keys deleted`
      )
    } catch (error) {
      log(`clean-up failed: ${String(error)}`)
    } finally {
      await runtime.dispose().catch(() => undefined)
    }
    if (cpuProfile) {
      for (const file of readdirSync(runDir).filter((f) => f.endsWith(".cpuprofile"))) {
        log(`CPU profile of the service: ${join(runDir, file)}`)
        console.log(summarizeProfile(readFileSync(join(runDir, file), "utf8"), 30))
      }
      removePlans()
    } else if (heapSnapshots) {
      removePlans()
      log(`kept the heap snapshots: ${runDir}`)
    } else if (succeeded) {
      rmSync(runDir, { recursive: true, force: true })
    } else {
      removePlans()
      log(`kept the service's log: ${join(runDir, "server.log")}`)
    }
  })())

for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping`)
    void cleanUp().finally(() => process.exit(130))
  })
}

const overall = setTimeout(
  () => {
    log("the run exceeded 20 minutes: stopping")
    void cleanUp().finally(() => process.exit(1))
  },
  // A full run takes about 10 minutes on a quiet machine, the cluster pass 3 of them; a busy one takes longer.
  20 * 60 * 1000
)
overall.unref()

const reportFrom = argv.find((a) => a.startsWith("--report-from="))?.slice("--report-from=".length)
/** The last full run's results, outside the repository, so that the section can be re-rendered (`--report-from=<file>`). */
const lastResults = join(tmpdir(), "bench-broadcast-results.json")
/** A partial run's, apart from the full run's. */
const partialResults = join(tmpdir(), "bench-broadcast-results-partial.json")

if (reportFrom !== undefined) {
  const results = Schema.decodeUnknownSync(ResultsJson)(readFileSync(reportFrom, "utf8"))
  log(`wrote the Broadcast section of ${writeReport(results)} from ${reportFrom}`)
  rmSync(runDir, { recursive: true, force: true })
  process.exit(0)
}

try {
  const results = await runBench()
  succeeded = true
  await cleanUp()
  log(`done in ${results.durationSeconds} s`)
  if (writesReport) {
    writeFileSync(lastResults, JSON.stringify(results, null, 2))
    log(`results: ${lastResults}`)
    const file = writeReport(results)
    log(`wrote the Broadcast section of ${file}`)
  } else {
    writeFileSync(partialResults, JSON.stringify(results, null, 2))
    log(`partial, quick or profiling run: BENCHMARKS.md left as it is; results: ${partialResults}`)
  }
  process.exit(0)
} catch (error) {
  log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
  await cleanUp()
  process.exit(1)
}
