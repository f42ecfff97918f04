/**
 * `npm run bench:compare -- --baseline=<tree> [--only=http,presence,start,rss,web] [--rounds=N]`:
 * this tree against a baseline tree (a git worktree of an earlier commit, e.g.
 * the last Effect 3 commit, with its own node_modules and build), each
 * benchmark run alternately in the two trees on this machine (A B B A ...),
 * so that the load other work puts on the machine falls on both alike. Each
 * tree runs its OWN bench scripts (their data set-up runs that tree's src in
 * process) on its own database; Redis is shared. What the scripts print is
 * parsed (both trees print the same tables), and ONE section of
 * BENCHMARKS.md is written: every figure with its floor (from this tree's
 * runs), the baseline's and this tree's value, this tree's ratio to the floor
 * of the same run, the target and whether it is met.
 *
 * Benchmarks (each reduced so that the whole comparison fits in ~25 minutes on 2 cores):
 *  - http: `bench:http --no-write` (full sample counts);
 *  - presence: `bench:presence --rounds=2` (2 rounds of 5 s per target instead of 4);
 *  - start: this tree's `bench:start --no-write` with SERVICE_DIR / SERVICE_NODE (so both
 *    services are started by the same script; RUNS=3 starts after the warm-up instead of 5);
 *  - rss: `bench:broadcast --only=rss --rss-steps=1000` (one step of 1,000 idle streams;
 *    one round, A B, unless --rounds is given);
 *  - web: gzip size of the JavaScript the web page loads (dist/web/index.html's scripts and
 *    module preloads), read from each tree's build: no run.
 *
 * Options: `--baseline=<dir>` (required), `--baseline-node=<node binary>` (default /usr/bin/node),
 * `--baseline-database=<url>` (default postgres://postgres@127.0.0.1:5432/bench_e3),
 * `--database=<url>` (default postgres://postgres@127.0.0.1:5432/bench_e4), `--only=...` (also the order of the runs),
 * `--rounds=N` (runs per tree of every benchmark; `--rounds=http:2,start:1` for some), `--no-write`
 * (print the section only).
 * Each run's output is kept in a directory under the system's tmp (printed at the start).
 */
import { spawn, spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { cpus, loadavg, tmpdir, totalmem } from "node:os"
import { dirname, join, resolve } from "node:path"
import { gzipSync } from "node:zlib"
import { benchmarksFile, writeBenchmarkSection } from "./benchmarksFile"

const repo = resolve(import.meta.dirname, "..")
const argv = process.argv.slice(2)
const option = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)

const baselineArg = option("baseline")
if (baselineArg === undefined) {
  console.error("usage: npm run bench:compare -- --baseline=<tree> [--only=http,presence,start,rss,web] [--rounds=N]")
  process.exit(2)
}
const baselineDir = resolve(baselineArg)
const baselineNode = option("baseline-node") ?? "/usr/bin/node"
const baselineDatabase = option("baseline-database") ?? "postgres://postgres@127.0.0.1:5432/bench_e3"
const database = option("database") ?? "postgres://postgres@127.0.0.1:5432/bench_e4"
const roundsArg = option("rounds")
const allBenchmarks = ["http", "presence", "start", "rss", "web"] as const
type BenchmarkName = (typeof allBenchmarks)[number]
const isBenchmarkName = (name: string): name is BenchmarkName => allBenchmarks.some((b) => b === name)
const only = (option("only")?.split(",") ?? [...allBenchmarks]).filter(isBenchmarkName)
const writes = !argv.includes("--no-write")
const runTimeoutMs = 10 * 60_000

const logDir = mkdtempSync(join(tmpdir(), "bench-compare-"))
const log = (line: string) => console.log(`[bench:compare ${new Date().toISOString().slice(11, 19)}] ${line}`)

// ---------------------------------------------------------------- the two trees

interface Tree {
  readonly label: "Effect 3" | "Effect 4"
  readonly key: "baseline" | "current"
  readonly dir: string
  readonly node: string
  readonly database: string
}

const baseline: Tree = {
  label: "Effect 3",
  key: "baseline",
  dir: baselineDir,
  node: baselineNode,
  database: baselineDatabase
}
const current: Tree = { label: "Effect 4", key: "current", dir: repo, node: process.execPath, database }

/** The environment a tree's scripts run in: its Node first on PATH, its database under every name the scripts read. */
const envOf = (tree: Tree, extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  PATH: `${dirname(tree.node)}:${process.env.PATH ?? ""}`,
  DATABASE_URL: tree.database,
  TEST_DATABASE_URL: tree.database,
  BENCH_DATABASE_URL: tree.database,
  ...extra
})

/** The tree's commit, and whether it has uncommitted changes. */
const commitOf = (dir: string) => {
  const head = spawnSync("git", ["-C", dir, "rev-parse", "--short", "HEAD"], { encoding: "utf8" }).stdout.trim()
  const dirty = spawnSync("git", ["-C", dir, "status", "--porcelain", "--untracked-files=no"], {
    encoding: "utf8"
  }).stdout.trim()
  return head === "" ? "not a git tree" : `commit ${head}${dirty === "" ? "" : " with uncommitted changes"}`
}

/** The baseline tree must be left as it was: its BENCHMARKS.md is put back after every run if a script wrote it. */
const baselineBenchmarks = join(baselineDir, "BENCHMARKS.md")
const baselineBenchmarksText = existsSync(baselineBenchmarks) ? readFileSync(baselineBenchmarks, "utf8") : undefined
const restoreBaselineBenchmarks = () => {
  if (baselineBenchmarksText === undefined) return
  if (readFileSync(baselineBenchmarks, "utf8") !== baselineBenchmarksText) {
    writeFileSync(baselineBenchmarks, baselineBenchmarksText)
    log(`restored ${baselineBenchmarks} (a script had written it)`)
  }
}

interface RunOutput {
  readonly text: string
  readonly code: number | null
  readonly seconds: number
  readonly logFile: string
}

let runCount = 0
/** Runs `command` in `cwd` with `env`, its output kept in the log directory; killed (its group) after the timeout. */
const run = (name: string, tree: Tree, cwd: string, command: ReadonlyArray<string>, env: NodeJS.ProcessEnv) =>
  new Promise<RunOutput>((done) => {
    const logFile = join(logDir, `${String(++runCount).padStart(2, "0")}-${name}-${tree.key}.log`)
    const started = performance.now()
    log(`${name}: ${tree.label} (${tree.dir}): ${command.join(" ")}`)
    const [file, ...args] = command
    const child = spawn(file ?? "npm", args, { cwd, env, detached: true, stdio: ["ignore", "pipe", "pipe"] })
    const chunks: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => chunks.push(chunk))
    child.stderr.on("data", (chunk: Buffer) => chunks.push(chunk))
    const timer = setTimeout(() => {
      log(`${name}: ${tree.label}: no end after ${runTimeoutMs / 60_000} min: stopping it`)
      if (child.pid !== undefined) process.kill(-child.pid, "SIGTERM")
    }, runTimeoutMs)
    child.on("close", (code) => {
      clearTimeout(timer)
      const text = Buffer.concat(chunks).toString("utf8")
      writeFileSync(logFile, text)
      const seconds = (performance.now() - started) / 1000
      log(`${name}: ${tree.label}: exit ${code} after ${seconds.toFixed(0)} s (${logFile})`)
      if (tree.key === "baseline") restoreBaselineBenchmarks()
      done({ text, code, seconds, logFile })
    })
  })

// ---------------------------------------------------------------- figures

/** One figure as one run measured it: the tree's value and, where the script has one, the floor of that run. */
interface Measurement {
  readonly value: number
  readonly floor?: number
}
type Figures = Map<string, Measurement>

const num = (text: string | undefined) => (text === undefined ? Number.NaN : Number(text.replaceAll(",", "")))
const tableRow = (text: string, label: RegExp): ReadonlyArray<string> | undefined => {
  for (const line of text.split("\n")) {
    if (!line.startsWith("|")) continue
    const cells = line
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim())
    if (cells[0] !== undefined && label.test(cells[0])) return cells
  }
  return undefined
}
const firstNumber = (cell: string | undefined) => num(/-?[\d,]*\.?\d+/.exec(cell ?? "")?.[0])
const put = (figures: Figures, key: string, cells: ReadonlyArray<string> | undefined, pick = firstNumber) => {
  if (cells === undefined) return
  const value = pick(cells[1])
  const floor = pick(cells[2])
  if (Number.isFinite(value)) figures.set(key, Number.isFinite(floor) ? { value, floor } : { value })
}

const parseHttp = (text: string): Figures => {
  const figures: Figures = new Map()
  put(figures, "patch.p50", tableRow(text, /^PATCH, 1 client, p50$/))
  put(figures, "patch.p99", tableRow(text, /^PATCH, 1 client, p99$/))
  put(figures, "patch.cpu", tableRow(text, /^PATCH, 1 client, server CPU per request$/))
  put(
    figures,
    "spread.throughput",
    tableRow(text, /^PATCH, 32 clients on records of 32 different workspaces, throughput$/)
  )
  put(figures, "spread.cpu", tableRow(text, /^PATCH, 32 clients on 32 workspaces, server CPU per request$/))
  put(
    figures,
    "one.throughput",
    tableRow(text, /^PATCH, 32 clients on distinct records( of one workspace)?, throughput$/)
  )
  put(figures, "one.cpu", tableRow(text, /^PATCH, 32 clients( on one workspace)?, server CPU per request$/))
  put(figures, "page1.p50", tableRow(text, /^timeline page 1, p50$/))
  put(figures, "page200.p50", tableRow(text, /^timeline page 200, p50$/))
  put(figures, "page.cpu", tableRow(text, /^timeline page(s)? 1( and 200)?, server CPU per request$/))
  put(figures, "page.spread", tableRow(text, /^timeline page 200 \/ page 1, p50$/))
  return figures
}

const parsePresence = (text: string): Figures => {
  const figures: Figures = new Map()
  const service = tableRow(text, /^service \(compiled\)$/)
  const floor = tableRow(text, /^floor: bare node:http/)
  const p99 = (cell: string | undefined) => num(/\/\s*([\d.,]+)\s*ms/.exec(cell ?? "")?.[1])
  if (service !== undefined && floor !== undefined) {
    figures.set("presence.rate", { value: firstNumber(service[1]), floor: firstNumber(floor[1]) })
    figures.set("presence.p99", { value: p99(service[2]), floor: p99(floor[2]) })
    figures.set("presence.cpu", { value: firstNumber(service[4]), floor: firstNumber(floor[4]) })
  }
  return figures
}

const parseStart = (text: string): Figures => {
  const figures: Figures = new Map()
  put(figures, "start.rss", tableRow(text, /^base RSS, median$/))
  put(figures, "start.rssWorst", tableRow(text, /^base RSS, worst$/))
  put(figures, "start.first", tableRow(text, /^start to first answer, median$/))
  return figures
}

const parseRss = (text: string): Figures => {
  const figures: Figures = new Map()
  const perStream = (target: string) => {
    const found = [...text.matchAll(new RegExp(`${target}: (\\d+) idle streams .*?, ([\\d.]+) KiB per stream`, "g"))]
    return num(found.at(-1)?.[2])
  }
  const server = perStream("server")
  const bare = perStream("bare")
  if (Number.isFinite(server) && Number.isFinite(bare)) figures.set("rss.perStream", { value: server, floor: bare })
  return figures
}

/** Gzip size (kB) of the JavaScript dist/web/index.html loads up front: its module scripts and module preloads. */
const webJavaScriptKb = (dir: string): Figures => {
  const figures: Figures = new Map()
  const web = join(dir, "dist", "web")
  const indexFile = join(web, "index.html")
  if (!existsSync(indexFile)) return figures
  const html = readFileSync(indexFile, "utf8")
  const files = new Set(
    [...html.matchAll(/<(?:script[^>]*\bsrc|link[^>]*rel="modulepreload"[^>]*\bhref)="([^"]+\.js)"/g)].flatMap((m) =>
      m[1] === undefined ? [] : [m[1]]
    )
  )
  let bytes = 0
  for (const file of files) bytes += gzipSync(readFileSync(join(web, file.replace(/^\//, "")))).length
  figures.set("web.gzip", { value: bytes / 1000 })
  return figures
}

// ---------------------------------------------------------------- benchmarks

interface Benchmark {
  readonly name: BenchmarkName
  readonly rounds: number
  readonly describe: string
  readonly run: (tree: Tree) => Promise<{ figures: Figures; output?: RunOutput }>
}

const npmRun = (tree: Tree, script: string, args: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
  run(script, tree, tree.dir, ["npm", "run", script, "--", ...args], envOf(tree, extra))

const withOutput =
  (parse: (text: string) => Figures, start: (tree: Tree) => Promise<RunOutput>) =>
  async (tree: Tree): Promise<{ figures: Figures; output: RunOutput }> => {
    const output = await start(tree)
    return { figures: parse(output.text), output }
  }

/** `--rounds=N` for every benchmark, or `--rounds=http:2,start:1` for some (the others keep their default). */
const rounds = (name: BenchmarkName, fallback: number) => {
  if (roundsArg === undefined) return fallback
  if (/^\d+$/.test(roundsArg)) return Number(roundsArg)
  const given = roundsArg
    .split(",")
    .map((part) => part.split(":"))
    .find(([benchmark]) => benchmark === name)?.[1]
  return given === undefined ? fallback : Number(given)
}

const benchmarks: ReadonlyArray<Benchmark> = [
  {
    name: "http",
    rounds: rounds("http", 2),
    describe:
      "`npm run bench:http -- --no-write` (3,000 PATCHes and 1,500 pages per server, 3 × 5 s windows per 32-client row)",
    run: withOutput(parseHttp, (tree) => npmRun(tree, "bench:http", ["--no-write"]))
  },
  {
    name: "presence",
    rounds: rounds("presence", 2),
    describe: "`npm run bench:presence -- --rounds=2` (2 rounds of 5 s per target instead of 4)",
    run: withOutput(parsePresence, (tree) => npmRun(tree, "bench:presence", ["--rounds=2"]))
  },
  {
    name: "start",
    rounds: rounds("start", 2),
    describe:
      "this tree's `npm run bench:start -- --no-write` with `SERVICE_DIR`/`SERVICE_NODE` set to each tree, `RUNS=3` (3 starts after a warm-up instead of 5)",
    run: withOutput(parseStart, (tree) =>
      run(
        "bench:start",
        tree,
        repo,
        ["npm", "run", "bench:start", "--", "--no-write"],
        // The script runs on this tree's Node; the service on its tree's.
        envOf(current, {
          SERVICE_DIR: tree.dir,
          SERVICE_NODE: tree.node,
          RUNS: "3",
          DATABASE_URL: tree.database,
          TEST_DATABASE_URL: tree.database
        })
      )
    )
  },
  {
    name: "rss",
    rounds: rounds("rss", 1),
    describe:
      "`npm run bench:broadcast -- --only=rss --rss-steps=1000` (one step, 1,000 idle streams, instead of 1,000/5,000/10,000)",
    run: withOutput(parseRss, (tree) => npmRun(tree, "bench:broadcast", ["--only=rss", "--rss-steps=1000"]))
  },
  {
    name: "web",
    rounds: 1,
    describe:
      "gzip (zlib default level) of the JavaScript `dist/web/index.html` loads (scripts and module preloads) of each tree's build",
    run: async (tree) => ({ figures: webJavaScriptKb(tree.dir) })
  }
]

// ---------------------------------------------------------------- the table

interface Collected {
  readonly baseline: Array<Measurement>
  readonly current: Array<Measurement>
}
const collected = new Map<string, Collected>()
const failures: Array<string> = []

const record = (tree: Tree, figures: Figures) => {
  for (const [key, measurement] of figures) {
    const entry = collected.get(key) ?? { baseline: [], current: [] }
    entry[tree.key].push(measurement)
    collected.set(key, entry)
  }
}

const mean = (values: ReadonlyArray<number>) => values.reduce((a, b) => a + b, 0) / values.length

interface Row {
  readonly key: string
  readonly figure: string
  readonly unit: string
  readonly digits: number
  /** Ratio of this tree's value to the floor of the same run (mean over this tree's runs). */
  readonly ratio?: "value/floor" | "none"
  readonly target?: string
  readonly pass?: (value: number, ratio: number) => boolean
}

const rows: ReadonlyArray<Row> = [
  {
    key: "patch.p50",
    figure: "PATCH over HTTP, 1 client, p50",
    unit: "ms",
    digits: 2,
    target: "<= 1.3× floor",
    pass: (_, r) => r <= 1.3
  },
  { key: "patch.p99", figure: "PATCH over HTTP, 1 client, p99", unit: "ms", digits: 2 },
  { key: "patch.cpu", figure: "PATCH over HTTP, 1 client, server CPU per request", unit: "µs", digits: 0 },
  {
    key: "spread.throughput",
    figure: "PATCH, 32 clients on records of 32 different workspaces, throughput",
    unit: "/s",
    digits: 0,
    target: ">= 80 % of floor",
    pass: (_, r) => r >= 0.8
  },
  { key: "spread.cpu", figure: "PATCH, 32 clients on 32 workspaces, server CPU per request", unit: "µs", digits: 0 },
  {
    key: "one.throughput",
    figure: "PATCH, 32 clients on distinct records of ONE workspace, throughput",
    unit: "/s",
    digits: 0,
    target: "(printed)"
  },
  {
    key: "page1.p50",
    figure: "timeline page 1 over HTTP, p50",
    unit: "ms",
    digits: 2,
    target: "<= 1.3× floor",
    pass: (_, r) => r <= 1.3
  },
  {
    key: "page200.p50",
    figure: "timeline page 200 over HTTP, p50",
    unit: "ms",
    digits: 2,
    target: "<= 1.3× floor",
    pass: (_, r) => r <= 1.3
  },
  {
    key: "page.spread",
    figure: "timeline page 200 / page 1, p50 (each server's own)",
    unit: "×",
    digits: 2,
    ratio: "none",
    target: "<= 1.1",
    pass: (v) => v <= 1.1
  },
  {
    key: "page.cpu",
    figure: "timeline page, server CPU per request (Effect 3: page 1; Effect 4: pages 1 and 200)",
    unit: "µs",
    digits: 0
  },
  {
    key: "presence.rate",
    figure: "presence heartbeats, 64 connections, rate",
    unit: "/s",
    digits: 0,
    target: ">= 50 % of floor",
    pass: (_, r) => r >= 0.5
  },
  {
    key: "presence.p99",
    figure: "presence heartbeats, 64 connections, p99",
    unit: "ms",
    digits: 1,
    target: "<= 20 ms",
    pass: (v) => v <= 20
  },
  { key: "presence.cpu", figure: "presence heartbeat, server CPU per heartbeat", unit: "µs", digits: 0 },
  {
    key: "start.rss",
    figure: "base RSS of the compiled service, median",
    unit: "MiB",
    digits: 1,
    target: "<= 100 MiB",
    pass: (v) => v <= 100
  },
  {
    key: "start.rssWorst",
    figure: "base RSS of the compiled service, worst",
    unit: "MiB",
    digits: 1,
    target: "<= 100 MiB",
    pass: (v) => v <= 100
  },
  { key: "start.first", figure: "start to first answer, median", unit: "ms", digits: 0 },
  {
    key: "rss.perStream",
    figure: "RSS per idle stream, 1,000 streams, 30 s idle",
    unit: "KiB",
    digits: 1,
    target: "<= 1.5× bare",
    pass: (_, r) => r <= 1.5
  },
  {
    key: "web.gzip",
    figure: "web page's JavaScript, gzip",
    unit: "kB",
    digits: 1,
    target: "<= 120 kB",
    pass: (v) => v <= 120
  }
]

const format = (value: number, digits: number) =>
  Number.isFinite(value)
    ? value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : "-"
const describeValues = (values: ReadonlyArray<number>, row: Row) => {
  if (values.length === 0) return "not measured"
  const unit = row.unit === "/s" || row.unit === "×" ? row.unit : ` ${row.unit}`
  const text = `${format(mean(values), row.digits)}${unit}`
  return values.length === 1
    ? text
    : `${text} (${format(Math.min(...values), row.digits)}-${format(Math.max(...values), row.digits)})`
}

const tableOf = () => {
  const lines = [
    "| figure | floor (Effect 4 run) | Effect 3 | Effect 4 | Effect 4 / floor | target | |",
    "|---|---|---|---|---|---|---|"
  ]
  const missed: Array<string> = []
  for (const row of rows) {
    const entry = collected.get(row.key)
    if (entry === undefined) continue
    const values = entry.current.map((m) => m.value)
    const floors = entry.current.flatMap((m) => (m.floor === undefined ? [] : [m.floor]))
    const ratios =
      row.ratio === "none"
        ? []
        : entry.current.flatMap((m) => (m.floor === undefined || m.floor === 0 ? [] : [m.value / m.floor]))
    const ratio = ratios.length === 0 ? Number.NaN : mean(ratios)
    const value = values.length === 0 ? Number.NaN : mean(values)
    const passed = row.pass === undefined || !Number.isFinite(value) ? undefined : row.pass(value, ratio)
    if (passed === false) missed.push(row.figure)
    const verdict = passed === undefined ? "" : passed ? "PASS" : "**FAIL**"
    const ratioText = Number.isFinite(ratio)
      ? row.unit === "/s"
        ? `${(ratio * 100).toFixed(0)} %`
        : `${ratio.toFixed(2)}×`
      : "-"
    const baselineText =
      entry.baseline.length === 0 && entry.current.length > 0
        ? "no such row in its script"
        : describeValues(
            entry.baseline.map((m) => m.value),
            row
          )
    const floorText = floors.length === 0 ? "-" : describeValues(floors, row)
    lines.push(
      `| ${row.figure} | ${floorText} | ${baselineText} | ${describeValues(values, row)} | ${ratioText} | ${row.target ?? ""} | ${verdict} |`
    )
  }
  return { table: lines.join("\n"), missed }
}

// ---------------------------------------------------------------- main

const heading = "Effect 3 against Effect 4, same machine, interleaved"
const startedAt = new Date()
const loadAtStart = loadavg()
const wallStart = performance.now()
const command = `npm run bench:compare -- ${argv.join(" ")}`
log(`${command}; logs in ${logDir}`)
log(
  `baseline ${baselineDir} (${baselineNode}, ${baselineDatabase}); this tree ${repo} (${process.execPath}, ${database})`
)

const versionOf = async (tree: Tree) =>
  (await run("node-version", tree, tree.dir, [tree.node, "--version"], envOf(tree))).text.trim()
const versions = { baseline: await versionOf(baseline), current: await versionOf(current) }
const used: Array<Benchmark> = []
// In the order --only gives; the tree that goes first alternates from round to round and from benchmark to benchmark.
const chosen = only.flatMap((name) => benchmarks.filter((b) => b.name === name))
for (const [index, benchmark] of chosen.entries()) {
  used.push(benchmark)
  for (let round = 0; round < benchmark.rounds; round++) {
    // A B, then B A: each tree goes first as often as the other.
    const order = (round + index) % 2 === 0 ? [baseline, current] : [current, baseline]
    for (const tree of order) {
      const { figures, output } = await benchmark.run(tree)
      if (figures.size === 0) {
        const why = output === undefined ? "nothing to read" : `exit ${output.code}, see ${output.logFile}`
        failures.push(`${benchmark.name} on ${tree.label}, round ${round + 1}: no figures (${why})`)
        log(`${benchmark.name}: ${tree.label}: no figures read`)
      }
      record(tree, figures)
    }
  }
  log(`after ${benchmark.name}:\n${tableOf().table}`)
}

const { table, missed } = tableOf()
const loadAtEnd = loadavg()
const minutes = (performance.now() - wallStart) / 60_000
const load = (l: ReadonlyArray<number>) => l.map((x) => x.toFixed(2)).join(" / ")

/** The hand-written "Where the time goes" of the previous section is kept (it names the run it was written for). */
const keptNotes = (() => {
  if (!existsSync(benchmarksFile)) return ""
  const text = readFileSync(benchmarksFile, "utf8")
  const start = text.search(new RegExp(`^## ${heading}\\s*$`, "m"))
  if (start === -1) return ""
  const rest = text.slice(start + 1)
  const end = rest.search(/^## /m)
  const section = end === -1 ? rest : rest.slice(0, end)
  const notes = section.search(/^### Where the time goes/m)
  return notes === -1 ? "" : section.slice(notes).trimEnd()
})()

const section = `## ${heading}

Written by \`npm run bench:compare\` (bench/compare.ts) on ${startedAt.toISOString().slice(0, 16).replace("T", " ")} UTC; the run took ${minutes.toFixed(0)} min.
Command: \`${command}\` (in ${repo}).
Machine: ${cpus().length} × ${cpus()[0]?.model.trim() ?? "unknown CPU"}, ${(totalmem() / 1024 ** 3).toFixed(1)} GiB RAM, shared with other work
(load average 1 / 5 / 15 min at the start ${load(loadAtStart)}, at the end ${load(loadAtEnd)}); PostgreSQL and Redis on the same machine.

- **Effect 3**: ${baselineDir} (${commitOf(baselineDir)}), Node ${versions.baseline}, its own bench scripts, database \`${baselineDatabase}\`.
- **Effect 4**: this tree (${commitOf(repo)}), Node ${versions.current}, database \`${database}\`. Redis shared.
- Each benchmark ran alternately in the two trees (Effect 3, Effect 4, Effect 4, Effect 3, ...); a value with a range is
  the mean of the runs (lowest-highest). **floor** is the floor measured by the Effect 4 runs (their mean); the ratio is
  Effect 4 over the floor of the same run (mean of the runs' ratios). The Effect 3 scripts measure their own floors
  (node-postgres with unnamed statements, Node 20): not shown. The Effect 4 floors send named prepared statements
  (as sql-pg 4 does) on Node 24.
${used.map((b) => `- ${b.name}: ${b.describe}.`).join("\n")}

${table}

${missed.length === 0 ? "Every target met." : `Missed: ${missed.join("; ")}.`}
${failures.length === 0 ? "" : `\nNot measured: ${failures.join("; ")}.\n`}${keptNotes === "" ? "" : `\n${keptNotes}\n`}`

console.log(`\n${section}`)
if (writes) {
  writeBenchmarkSection(heading, section)
  log(`wrote the section "${heading}" of ${benchmarksFile}`)
}
restoreBaselineBenchmarks()
log(`run logs kept in ${logDir}`)
