/**
 * `npm run bench:start`: how fast the compiled service (`npm run build`,
 * started as `npm start` starts it) answers its first request, and its base
 * memory, next to a bare `node:http` server (the floor no Node service goes
 * below), over the real PostgreSQL and Redis:
 * DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test;
 * REDIS_URL, else TEST_REDIS_URL, else redis://127.0.0.1:6379.
 * Start to first answer: from spawning `node` to the first 200 of
 * `GET /api/health/live` (polled every 5 ms). Base RSS: the process's resident
 * memory 2 s after that answer, idle. One warm-up start (migrations on a fresh
 * database), then RUNS (default 5) starts each; medians and worst are printed
 * and written into the "Start" section of BENCHMARKS.md.
 *
 * `SERVICE_DIR` starts another tree's compiled service instead (e.g. a git
 * worktree of an earlier commit, with its own node_modules and build), run by
 * `SERVICE_NODE` (default: this Node); the floor stays this process's Node, so
 * runs against two trees share it. The section is then not written, nor
 * with `--no-write` (a comparison run, bench/compare.ts).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { benchmarksFile, writeBenchmarkSection } from "./benchmarksFile"
import { freePort } from "./freePort"

const repo = join(import.meta.dirname, "..")
const serviceDir = resolve(process.env.SERVICE_DIR ?? repo)
const serviceNode = process.env.SERVICE_NODE ?? process.execPath
const databaseUrl =
  process.env.DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const redisUrl = process.env.REDIS_URL ?? process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"
const runs = Number(process.env.RUNS ?? 5)
const writesSection = !process.argv.slice(2).includes("--no-write")
const targets = { firstAnswerMs: 2_000, rssMiB: 120 }

/** How `npm start` runs the compiled service (package.json), without the build check in front. */
const serviceArgs = ["--max-semi-space-size=4", "dist/server/main.js"]
const floorSource =
  'require("node:http").createServer((_, res) => res.end("ok")).listen(Number(process.env.PORT), "127.0.0.1")'

const answers = async (url: string) => {
  try {
    return (await fetch(url)).status === 200
  } catch {
    return false
  }
}

const residentMiB = (pid: number) => {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))
  return match?.[1] === undefined ? Number.NaN : Number(match[1]) / 1024
}

const stop = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGTERM")
  })

/** What to start: which Node, with which arguments, in which directory. */
interface Target {
  readonly node: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
}

interface Sample {
  readonly firstAnswerMs: number
  readonly rssMiB: number
}

const measure = async (target: Target, path: string): Promise<Sample> => {
  const { node, args, cwd } = target
  const port = await freePort()
  const started = performance.now()
  const child = spawn(node, args, {
    cwd,
    stdio: ["ignore", "ignore", "inherit"],
    env: { ...process.env, PORT: String(port), DATABASE_URL: databaseUrl, REDIS_URL: redisUrl, LOG_LEVEL: "WARN" }
  })
  try {
    while (!(await answers(`http://127.0.0.1:${port}${path}`))) {
      if (child.exitCode !== null) throw new Error(`${args.join(" ")} exited with ${child.exitCode}`)
      await sleep(5)
    }
    const firstAnswerMs = performance.now() - started
    await sleep(2_000)
    if (child.pid === undefined) throw new Error("no pid")
    return { firstAnswerMs, rssMiB: residentMiB(child.pid) }
  } finally {
    await stop(child)
  }
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN
}

const series = async (target: Target, path: string) => {
  const samples: Array<Sample> = []
  for (let run = 0; run < runs; run++) samples.push(await measure(target, path))
  return {
    firstAnswerMs: median(samples.map((s) => s.firstAnswerMs)),
    worstFirstAnswerMs: Math.max(...samples.map((s) => s.firstAnswerMs)),
    rssMiB: median(samples.map((s) => s.rssMiB)),
    worstRssMiB: Math.max(...samples.map((s) => s.rssMiB))
  }
}

const build = spawnSync(serviceNode, ["scripts/build-if-stale.mjs"], { cwd: serviceDir, stdio: "inherit" })
if (build.status !== 0) process.exit(build.status ?? 1)
console.log(`[bench] service: ${serviceDir}, ${serviceNode}`)

const serviceTarget: Target = { node: serviceNode, args: serviceArgs, cwd: serviceDir }
const floorTarget: Target = { node: process.execPath, args: ["-e", floorSource], cwd: repo }
await measure(serviceTarget, "/api/health/live") // warm-up: migrations on a fresh database, the disk cache
const service = await series(serviceTarget, "/api/health/live")
const floor = await series(floorTarget, "/")
const pass = service.worstFirstAnswerMs <= targets.firstAnswerMs && service.worstRssMiB <= targets.rssMiB

const ms = (n: number) => `${Math.round(n)} ms`
const mib = (n: number) => `${n.toFixed(1)} MiB`
const ratio = (a: number, b: number) => `${(a / b).toFixed(1)}×`
const table = [
  "| | compiled service | bare node:http (floor) | ratio | target |",
  "|---|---|---|---|---|",
  `| start to first answer, median | ${ms(service.firstAnswerMs)} | ${ms(floor.firstAnswerMs)} | ${ratio(service.firstAnswerMs, floor.firstAnswerMs)} | |`,
  `| start to first answer, worst | ${ms(service.worstFirstAnswerMs)} | ${ms(floor.worstFirstAnswerMs)} | ${ratio(service.worstFirstAnswerMs, floor.worstFirstAnswerMs)} | <= ${ms(targets.firstAnswerMs)} |`,
  `| base RSS, median | ${mib(service.rssMiB)} | ${mib(floor.rssMiB)} | ${ratio(service.rssMiB, floor.rssMiB)} | |`,
  `| base RSS, worst | ${mib(service.worstRssMiB)} | ${mib(floor.worstRssMiB)} | ${ratio(service.worstRssMiB, floor.worstRssMiB)} | <= ${targets.rssMiB} MiB |`
].join("\n")
console.log(table)
console.log(pass ? "PASS" : "FAIL")

const section = `## Start

\`npm run bench:start\` (bench/start.ts, ${new Date().toISOString().slice(0, 10)}, Node ${process.version}): the
compiled service (\`node ${serviceArgs.join(" ")}\`, as \`npm start\` runs it once built) over
real PostgreSQL and Redis, ${runs} starts after one warm-up, next to a bare \`node:http\` server. First answer:
spawn to the first 200 of \`GET /api/health/live\`; base RSS: 2 s later, idle.

${table}

**${pass ? "PASS" : "FAIL"}** (worst start <= 2 s and worst base RSS <= 120 MiB).
`

if (serviceDir === resolve(repo) && writesSection) {
  writeBenchmarkSection("Start", section)
  console.log(`[bench] wrote the Start section of ${benchmarksFile}`)
}
process.exit(pass ? 0 : 1)
