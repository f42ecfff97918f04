/**
 * Writes the "Broadcast" section of BENCHMARKS.md from one run's results,
 * leaving every other section (e.g. "Audit") as it is.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { Schema } from "effect"
import { Percentiles as PercentilesSchema, PresenceResult, SavesResult } from "./protocol"

export const CpuShare = Schema.Struct({
  /** Percent of one core over the measuring window. */
  server: Schema.Number,
  loadGenerator: Schema.Number,
  postgres: Schema.Number,
  redis: Schema.Number,
  /** Everything on the machine, percent of one core (the maximum is cores x 100). */
  machineBusy: Schema.Number,
  /** machineBusy minus the four above: other processes and the kernel. */
  others: Schema.Number
})
export type CpuShare = typeof CpuShare.Type

/** How busy the machine was just before a phase, and how long the bench waited for it to calm down. */
export const QuietCheck = Schema.Struct({ phase: Schema.String, busyPercent: Schema.Number, waitedSeconds: Schema.Number })
export type QuietCheck = typeof QuietCheck.Type

export const RssStep = Schema.Struct({
  streams: Schema.Number,
  /** RSS growth per stream over the no-stream baseline, KiB. */
  serverKiB: Schema.Number,
  bareKiB: Schema.Number,
  ratio: Schema.Number,
  serverRssKiB: Schema.Number,
  bareRssKiB: Schema.Number
})
export type RssStep = typeof RssStep.Type

/** What opening or closing many streams cost the process that holds them (`streams` -1: all of them). */
export const Churn = Schema.Struct({
  target: Schema.Literal("server", "bare"),
  action: Schema.Literal("open", "close"),
  streams: Schema.Number,
  seconds: Schema.Number,
  cpuSeconds: Schema.Number
})

export const Results = Schema.mutable(
  Schema.Struct({
    date: Schema.String,
    machine: Schema.Struct({ cores: Schema.Number, cpuModel: Schema.String, memoryGiB: Schema.Number, node: Schema.String }),
    settings: Schema.Struct({
      workspaces: Schema.Number,
      streamsPerWorkspace: Schema.Number,
      spreadRate: Schema.Number,
      hotStreams: Schema.Number,
      hotRate: Schema.Number,
      warmupMs: Schema.Number,
      spreadMeasureMs: Schema.Number,
      hotMeasureMs: Schema.Number,
      sweepMeasureMs: Schema.Number,
      presenceConcurrency: Schema.Number,
      presenceMeasureMs: Schema.Number
    }),
    floorIdle: Schema.optional(PercentilesSchema),
    rss: Schema.mutable(Schema.Array(RssStep)),
    rssBaseline: Schema.optional(Schema.Struct({ serverKiB: Schema.Number, bareKiB: Schema.Number })),
    spread: Schema.optional(SavesResult),
    sweep: Schema.mutable(Schema.Array(SavesResult)),
    hot: Schema.optional(SavesResult),
    presence: Schema.optional(PresenceResult),
    cpu: Schema.mutable(Schema.Record({ key: Schema.String, value: CpuShare })),
    quiet: Schema.mutable(Schema.Array(QuietCheck)),
    churn: Schema.mutable(Schema.Array(Churn)),
    serverLogLines: Schema.optional(Schema.Number),
    durationSeconds: Schema.Number
  })
)
export type Results = typeof Results.Type
export const ResultsJson = Schema.parseJson(Results)

export const targets = {
  p99Ms: 50,
  rssRatio: 1.5,
  heartbeatsPerSecond: 5_000
} as const

const ms = (value: number) => (value < 10 ? value.toFixed(2) : value < 100 ? value.toFixed(1) : value.toFixed(0))
const int = (value: number) => Math.round(value).toLocaleString("en-US")
const met = (ok: boolean) => (ok ? "**met**" : "**missed**")
const share = (part: number, whole: number) => (whole === 0 ? "0" : ((part / whole) * 100).toFixed(part === whole ? 0 : 1))

/** Commit -> receipt, honest about hints that never arrived: percentiles are of the received ones only. */
const latencyCell = (r: SavesResult) => {
  const p = r.commitToReceiptMs
  const lost = r.lostDeliveries > 0 ? `; ${int(r.lostDeliveries)} of ${int(r.expectedDeliveries)} (${share(r.lostDeliveries, r.expectedDeliveries)} %) never arrived` : ""
  if (p.count === 0) return `none of the window's ${int(r.expectedDeliveries)} hints arrived within the drain (≥ ${Math.round(r.windowSeconds)} s after the window)`
  return `${ms(p.p50)} / ${ms(p.p99)} ms (p99.9 ${ms(p.p999)}, max ${ms(p.max)}) over ${int(p.count)} received${lost}`
}
const latencyMet = (r: SavesResult) => r.commitToReceiptMs.count > 0 && r.lostDeliveries === 0 && r.commitToReceiptMs.p99 <= targets.p99Ms

const savesRows = (label: string, r: SavesResult, offeredRate: number, streamsPerSave: number) => {
  const offered = offeredRate * streamsPerSave
  return [
    `| ${label}: commit → receipt p50 / p99 | ${latencyCell(r)} | p99 ≤ ${targets.p99Ms} ms | ${met(latencyMet(r))} |`,
    `| ${label}: deliveries/s achieved | ${int(r.deliveriesPerSecond)}/s arrived during the window, of ${int(offered)}/s offered | ${int(offered)}/s | ${met(r.deliveriesPerSecond >= offered * 0.99 && r.lostDeliveries === 0)} |`,
    `| ${label}: saves committed/s (the input) | ${r.achievedRate.toFixed(1)}/s of ${offeredRate}/s (${int(r.throttledSaves)} not started: 256 already in flight; ${r.failedSaves} failed); BEGIN..COMMIT p50 / p99 ${ms(r.saveDurationMs.p50)} / ${ms(r.saveDurationMs.p99)} ms | ${offeredRate}/s | ${met(r.achievedRate >= offeredRate * 0.99)} |`
  ]
}

export const renderSection = (r: Results): string => {
  const s = r.settings
  const streams = s.workspaces * s.streamsPerWorkspace
  const rows: Array<string> = []
  if (r.spread !== undefined) rows.push(...savesRows(`Spread (${int(streams)} streams, ${s.workspaces} workspaces, ${s.spreadRate} saves/s)`, r.spread, s.spreadRate, s.streamsPerWorkspace))
  if (r.hot !== undefined) rows.push(...savesRows(`Hot workspace (${int(s.hotStreams)} streams, ${s.hotRate} saves/s)`, r.hot, s.hotRate, s.hotStreams))
  for (const step of r.rss) {
    rows.push(
      `| RSS per idle stream at ${int(step.streams)} streams: service / bare \`node:http\` | ${step.serverKiB.toFixed(1)} KiB / ${step.bareKiB.toFixed(1)} KiB = ${step.ratio.toFixed(2)}× (RSS ${int(step.serverRssKiB / 1024)} MiB / ${int(step.bareRssKiB / 1024)} MiB) | ≤ ${targets.rssRatio}× bare | ${met(step.ratio <= targets.rssRatio)} |`
    )
  }
  if (r.floorIdle !== undefined) rows.push(`| Floor: bare Redis PUBLISH → SUBSCRIBE p50 / p99, idle | ${ms(r.floorIdle.p50)} / ${ms(r.floorIdle.p99)} ms | (floor) | |`)
  if (r.spread !== undefined) rows.push(`| Floor, during the spread load | ${ms(r.spread.floorUnderLoadMs.p50)} / ${ms(r.spread.floorUnderLoadMs.p99)} ms | (floor) | |`)
  if (r.hot !== undefined) rows.push(`| Floor, during the hot-workspace load | ${ms(r.hot.floorUnderLoadMs.p50)} / ${ms(r.hot.floorUnderLoadMs.p99)} ms | (floor) | |`)
  if (r.presence !== undefined) {
    const p = r.presence
    rows.push(
      `| Presence heartbeats/s, one instance (${p.concurrency} in flight) | ${int(p.perSecond)}/s; latency p50 / p99 ${ms(p.latencyMs.p50)} / ${ms(p.latencyMs.p99)} ms; ${p.failed} failed | ≥ ${int(targets.heartbeatsPerSecond)}/s | ${met(p.perSecond >= targets.heartbeatsPerSecond && p.failed === 0)} |`
    )
  }

  const sweepRows = r.sweep.map((step) => {
    const cpu = r.cpu[step.phase]
    const offered = step.targetRate * s.streamsPerWorkspace
    const p = step.commitToReceiptMs
    const latency = p.count === 0 ? "none arrived" : `${ms(p.p50)} / ${ms(p.p99)} ms`
    return `| ${step.targetRate} | ${int(offered)} | ${int(step.deliveriesPerSecond)} | ${int(step.lostDeliveries)} of ${int(step.expectedDeliveries)} | ${latency} | ${cpu === undefined ? "?" : `${cpu.server} %`} | ${step.loopDelayMs.p99.toFixed(1)} ms |`
  })
  const sustainable = r.sweep.filter(latencyMet).map((step) => step.targetRate * s.streamsPerWorkspace)

  const cpuRows = Object.entries(r.cpu).map(
    ([phase, c]) =>
      `| ${phase} | ${c.server} % | ${c.loadGenerator} % | ${c.postgres} % | ${c.redis} % | ${c.others} % | ${c.machineBusy} % of ${r.machine.cores * 100} % |`
  )
  const churn = r.churn
    .filter((c) => c.target === "server" && c.streams >= 5_000)
    .map((c) => `${c.action === "open" ? "opening" : "closing"} ${int(c.streams)} streams took ${c.seconds.toFixed(1)} s and ${c.cpuSeconds.toFixed(1)} s of the service's CPU (${((c.cpuSeconds / c.streams) * 1000).toFixed(2)} ms per stream)`)
  const bareOpen = r.churn.filter((c) => c.target === "bare" && c.action === "open")
  const bareOpenCpu = bareOpen.reduce((n, c) => n + c.cpuSeconds, 0)
  const bareOpened = bareOpen.reduce((n, c) => n + c.streams, 0)

  const misses: Array<string> = []
  if (r.spread !== undefined && !latencyMet(r.spread)) misses.push("spread commit → receipt")
  if (r.spread !== undefined && r.spread.deliveriesPerSecond < s.spreadRate * s.streamsPerWorkspace * 0.99) misses.push(`spread deliveries (${int(r.spread.deliveriesPerSecond)}/s of ${int(s.spreadRate * s.streamsPerWorkspace)}/s)`)
  if (r.hot !== undefined && !latencyMet(r.hot)) misses.push("hot-workspace commit → receipt")
  if (r.hot !== undefined && r.hot.deliveriesPerSecond < s.hotRate * s.hotStreams * 0.99) misses.push(`hot-workspace deliveries (${int(r.hot.deliveriesPerSecond)}/s of ${int(s.hotRate * s.hotStreams)}/s)`)
  for (const step of r.rss) {
    if (step.ratio > targets.rssRatio) misses.push(`RSS per stream at ${int(step.streams)} streams (${step.ratio.toFixed(1)}× bare)`)
  }
  if (r.presence !== undefined && r.presence.perSecond < targets.heartbeatsPerSecond) {
    misses.push(`presence (${int(r.presence.perSecond)} heartbeats/s)`)
  }

  return [
    "## Broadcast",
    "",
    `Written by \`npm run bench:broadcast\` (bench/broadcast/main.ts) on ${r.date.slice(0, 10)} (${r.date}); the whole run took ${r.durationSeconds} s.`,
    `Machine: ${r.machine.cores} cores (${r.machine.cpuModel}), ${r.machine.memoryGiB} GiB RAM, Node ${r.machine.node}; ` +
      "PostgreSQL and Redis run on the same machine, and the service, the load generator, PostgreSQL and Redis share its two cores (other sessions' test runs may add load: see the CPU table, column \"other processes\").",
    "",
    "| measurement | result | target | |",
    "|---|---|---|---|",
    ...rows,
    "",
    misses.length === 0 ? "Every target is met." : `**Missed**: ${misses.join("; ")}. See \"Reading the results\".`,
    "",
    ...(sweepRows.length === 0
      ? []
      : [
          `### Capacity sweep: the spread layout (${int(streams)} streams, ${s.streamsPerWorkspace} per workspace) at lower save rates`,
          "",
          `Each step on the same service, lowest rate first, ${s.sweepMeasureMs / 1000} s windows. Highest offered rate with every hint delivered and p99 ≤ ${targets.p99Ms} ms: ${sustainable.length === 0 ? "none of the steps" : `${int(Math.max(...sustainable))} deliveries/s`}.`,
          "",
          "| saves/s | deliveries/s offered | arrived/s | lost | commit → receipt p50 / p99 | service CPU | load generator loop delay p99 |",
          "|---|---|---|---|---|---|---|",
          ...sweepRows,
          ""
        ]),
    "### CPU during each measuring window",
    "",
    "From `/proc/<pid>/stat`; 100 % = one core; PostgreSQL and Redis include every connection to them.",
    "",
    "| phase | service | load generator | PostgreSQL | Redis | other processes, kernel | whole machine |",
    "|---|---|---|---|---|---|---|",
    ...cpuRows,
    "",
    `Before each phase the bench waits (up to a minute, at most 90 s in all) for the machine to be under 25 % busy; it found: ${r.quiet.map((q) => `${q.phase} ${q.busyPercent} %${q.waitedSeconds > 3 ? ` (after ${q.waitedSeconds} s)` : ""}`).join(", ")}.`,
    ...(churn.length === 0 ? [] : ["", `Stream churn: ${churn.join("; ")}. The bare server opened ${int(bareOpened)} streams with ${bareOpenCpu.toFixed(1)} s of CPU.`]),
    "",
    "### What was measured, and how",
    "",
    `- Processes: the service (\`node --import tsx src/main.ts\` with real PostgreSQL and Redis, \`LOG_LEVEL=WARN\`, \`DATABASE_POOL_SIZE=10\`, \`BROADCAST_KEEPALIVE_MS\` one hour so that idle streams stay idle), the load generator (\`bench/broadcast/load.ts\`), a bare \`node:http\` server (\`bench/broadcast/bare.ts\`), and the orchestrator (\`bench/broadcast/main.ts\`), which only reads \`/proc\` while a window is open. The service is restarted (same port, same sessions) before the spread load and before presence + hot workspace, because an overloaded phase leaves a backlog in the service that would spill into the next one.`,
    `- Data: ${s.workspaces} workspaces \`bench-b-<n>\`, each with one admin user and 100 \`crm/company\` records, made through the domain services (Workspaces.create, Users.create, Memberships.add, Roles.assign, Records.create in units of work); a session cookie per user from \`POST /api/auth/login\`. Dropped at the end, also after a failure or Ctrl-C: Workspaces.drop, the users (one DELETE: no service removes users; sessions and memberships cascade), the presence keys.`,
    "- Streams: plain `node:http` GET `/api/broadcast` with the cookie, one socket each (`agent: false`); a stream counts as open once its `: connected` comment has arrived. Events are split on blank lines and a `changed` event's `businessObjectId` is cut out of its data line.",
    `- Saves: the service's own unit of work, run in the load generator against the same PostgreSQL and Redis: \`UnitOfWork.run\` + \`Records.create\` (a new \`crm/company\` record per save, so the record id in a hint names exactly one save), the workspace's user as actor. Each save writes its record and audit row and publishes through the outbound bridge and the Redis channel exactly as a save over HTTP would; the HTTP layer of the request is left out on purpose (it would measure the request path and take CPU from the instance under test). A fixed-rate scheduler (1 ms tick) starts saves at the phase's rate, round-robin over its workspaces, at most 256 in flight (a save that would be the 257th is not started and is counted as not started).`,
    "- Commit → receipt: the commit time is taken in the saving fiber as soon as the unit of work returns (COMMIT acknowledged, the publish just handed off), the receipt time when the chunk holding the event is read from the stream's socket, both from `performance.timeOrigin + performance.now()` in the load generator. Only saves started inside the measuring window count. After the window the bench drains: at least 3 s, then until every expected hint has arrived or none has for 5 s, at most 20 s more; what has not arrived by then is lost (the service's per-stream queues drop the oldest hints of a lagging stream: 256). Latency percentiles are of the received hints only, so the lost ones are reported beside them.",
    `- Deliveries/s: \`changed\` hints that arrived at any stream during the window, divided by its length (${s.spreadMeasureMs / 1000} s spread, ${s.hotMeasureMs / 1000} s hot, after a ${s.warmupMs / 1000} s warm-up); offered = saves/s × streams of the saved workspace. Expected deliveries of a save = the streams of its workspace open when it started; lost = expected − received.`,
    "- RSS per idle stream: VmRSS (`/proc/<pid>/status`) of the service and of the bare server after a full GC (both run with `--expose-gc` and `bench/broadcast/hooks.ts`, which calls `gc()` on SIGUSR2) once it holds within 0.5 % for 3 s; minus the same reading with no streams (taken after 500 streams were opened and closed once, so that compiled code and grown pools count as shared), divided by the open streams. The bare server's streams are opened, measured and closed first, then the service's. At 1,000 streams the bare server grows by only a few MiB, so its per-stream figure (and the ratio) is the least precise of the three.",
    `- Floor: two ioredis clients in the load generator, \`PUBLISH\` on one and the message on the other, one at a time: ${int(r.floorIdle?.count ?? 0)} sequential pings on the idle machine, and 20 per second alongside the spread and hot loads.`,
    `- Presence: \`PUT /api/presence/crm/company/<record>/<editor>\` from ${s.presenceConcurrency} keep-alive connections, each sending the next heartbeat when the previous one is answered, over ${int(r.presence?.editors ?? 0)} editors (20 per workspace; an editor's first heartbeat is an arrival, the rest renewals), for ${s.presenceMeasureMs / 1000} s after a 2 s warm-up, on a service with no streams open; every editor leaves (DELETE) afterwards.`,
    "",
    "### Reading the results",
    "",
    ...analysis(r),
    ""
  ].join("\n")
}

/** Facts of this run, then what profiling showed about where the time and memory go. */
const analysis = (r: Results): Array<string> => {
  const lines: Array<string> = []
  const s = r.settings
  const sweep = r.sweep
  if (sweep.length > 0) {
    const first = sweep[0]
    const firstCpu = first === undefined ? undefined : r.cpu[first.phase]
    const best = sweep.reduce((a, b) => (b.deliveriesPerSecond > a.deliveriesPerSecond ? b : a))
    const bestCpu = r.cpu[best.phase]
    const last = sweep[sweep.length - 1]
    if (first !== undefined && firstCpu !== undefined) {
      const perHintMs = (firstCpu.server / 100 / first.targetRate) * 1000
      lines.push(
        `- Fan-out cost: at ${first.targetRate} saves/s over ${int(first.streams)} streams the service used ${firstCpu.server} % of a core, about ${perHintMs.toFixed(0)} ms of CPU per hint, which goes to the ${s.streamsPerWorkspace} streams of one workspace (${((perHintMs / s.streamsPerWorkspace) * 1000).toFixed(0)} µs per delivery). ` +
          `Those ${s.streamsPerWorkspace} writes happen one after another on the one thread, so the last stream of a workspace gets a hint tens of ms after the first even when nothing else is queued: p50 ${ms(first.commitToReceiptMs.p50)} ms, p99 ${ms(first.commitToReceiptMs.p99)} ms at only ${int(first.deliveriesPerSecond)} deliveries/s.`
      )
    }
    if (bestCpu !== undefined && last !== undefined) {
      lines.push(
        `- Saturation and collapse: the most the service delivered in the sweep was ${int(best.deliveriesPerSecond)}/s (at ${best.targetRate} saves/s, ${bestCpu.server} % CPU, p99 ${ms(best.commitToReceiptMs.p99)} ms). ` +
          (last !== best
            ? `Past that it delivers less, not the same: at ${last.targetRate} saves/s only ${int(last.deliveriesPerSecond)}/s arrived and ${share(last.lostDeliveries, last.expectedDeliveries)} % of the window's hints never did (dropped by the 256-hint per-stream queues, or still queued inside the service when the drain gave up). Nothing pushes back on an overloaded instance: the Redis inbox is unbounded, so it only falls further behind.`
            : "")
      )
    }
  }
  const spread = r.spread
  const cpu = r.cpu.spread
  if (spread !== undefined && cpu !== undefined) {
    lines.push(
      `- Spread load as asked: the load generator committed ${spread.achievedRate.toFixed(0)} saves/s of the ${spread.targetRate}/s asked (BEGIN..COMMIT p50 ${ms(spread.saveDurationMs.p50)} ms: each save is a full unit of work in the load generator, and the machine was out of CPU), offering ${int(spread.achievedRate * s.streamsPerWorkspace)} deliveries/s; ${int(spread.deliveriesPerSecond)}/s arrived. ` +
        `CPU over the window: service ${cpu.server} %, load generator ${cpu.loadGenerator} %, PostgreSQL ${cpu.postgres} %, Redis ${cpu.redis} %, whole machine ${cpu.machineBusy} % of ${r.machine.cores * 100} %; the bare Redis round trip went from ${ms(r.floorIdle?.p50 ?? 0)} ms p50 idle to ${ms(spread.floorUnderLoadMs.p50)} ms (p99 ${ms(spread.floorUnderLoadMs.p99)} ms) and the load generator's event loop ran up to ${spread.loopDelayMs.p99.toFixed(0)} ms late (p99). ` +
        `A bigger machine would let the saves reach 500/s, but the service would still be far past the saturation point the sweep shows (${int(Math.max(0, ...sweep.map((x) => x.deliveriesPerSecond)))} deliveries/s on one core), so the ${int(s.spreadRate * s.streamsPerWorkspace)}/s target is out of reach of this code, not only of this machine.`
    )
  }
  const hot = r.hot
  const hotCpu = r.cpu.hot
  if (hot !== undefined && hotCpu !== undefined) {
    lines.push(
      `- Hot workspace: ${int(hot.deliveriesPerSecond)} deliveries/s arrived of ${int(s.hotRate * s.hotStreams)}/s offered with the service at ${hotCpu.server} % CPU, the machine ${hotCpu.machineBusy} % busy and the saves on time (${hot.achievedRate.toFixed(0)}/s, BEGIN..COMMIT p50 ${ms(hot.saveDurationMs.p50)} ms). ` +
        "With 1,000 streams in one workspace a lagging stream takes several hints per pull, so a core yields more deliveries than in the spread layout, but still a fraction of the offer: the lag grows to seconds and the 256-hint queues drop the oldest hints."
    )
  }
  const rss = r.rss[r.rss.length - 1]
  if (rss !== undefined) {
    lines.push(
      `- Memory: ${rss.serverKiB.toFixed(0)} KiB per idle stream against ${rss.bareKiB.toFixed(0)} KiB for the bare server (${rss.ratio.toFixed(1)}×), so ${int(rss.streams)} idle streams hold ${int(rss.serverRssKiB / 1024)} MiB; garbage collection, whose full collections have to walk that live heap, took about a third of the service's CPU in the delivery profiles.`
    )
  }
  const presence = r.presence
  const presenceCpu = r.cpu.presence
  if (presence !== undefined && presenceCpu !== undefined) {
    const perHeartbeatMs = ((presenceCpu.server + presenceCpu.postgres) / 100 / presence.perSecond) * 1000
    lines.push(
      `- Presence: ${int(presence.perSecond)} heartbeats/s with the service at ${presenceCpu.server} % and PostgreSQL at ${presenceCpu.postgres} % of a core, about ${perHeartbeatMs.toFixed(1)} ms of CPU per heartbeat between them: ${int(targets.heartbeatsPerSecond)}/s would take about ${((perHeartbeatMs * targets.heartbeatsPerSecond) / 1000).toFixed(0)} cores of this machine.`
    )
  }
  for (const note of notes) lines.push(note)
  return lines
}

/**
 * Where the time and memory go, from separate diagnostic runs on this machine
 * (2026-11-21): a CPU profile of the service over one measuring window (the
 * inspector's profiler, attached with SIGUSR1), `main.ts --cpu-prof`, heap
 * snapshots of the service with 0 and 1,000 idle streams, and direct timings.
 * Kept by hand: re-check them when the code changes.
 */
const notes: ReadonlyArray<string> = [
  "- Where a delivery's CPU goes (the inspector's profiler on the service over 6 s of the sweep at 25 saves/s, main thread saturated): garbage collection 35 %, Effect's runtime 39 % (fiber run loop, FiberRefs, scheduler, channel executor), Node's stream and socket writes 20 %, the service's own code 0.2 %. Over 8 s of the overloaded spread window it is worse: GC 39 %, 25 % self time in the continuation of `Fiber.interrupt` alone, and the socket writes themselves under 1 %. Per stream, `src/broadcast/BroadcastHttp.ts` builds `Stream.fromQueue(subscription)` → `filter` → `map(toSse)`, merged (`Stream.merge`) with a keep-alive `Stream.fromSchedule` of its own, after `Stream.concat`, through `Stream.encodeText`, into `HttpServerResponse.stream` (`Stream.runForEachChunk` + `res.write`). `Stream.merge` is `Channel.mergeWith`, which for every chunk of either side races a `Fiber.join` of both sides, interrupts the loser and forks a new pull fiber into the scope (effect `internal/channel.js`, `go` / `OP_BOTH_RUNNING`): the per-stream keep-alive makes every delivery cost several fiber forks and an interrupt. On top of that `JSON.stringify`, the SSE encoder and the `TextEncoder` run once per stream rather than once per hint.",
  "- Where a stream's memory goes (heap snapshots, 1,000 idle streams against none): about 114 KiB of JavaScript heap per stream: 6 fibers (FiberRuntime), 21 channel executors, about 185 Effect primitives, 410 closures and 425 V8 contexts (scopes of closures); Node's own socket, request and response objects are about 1.3 KiB of it. The bare server needs about 11 KiB of RSS per stream in all. Opening a stream also costs two SQL queries (session, grants) and a few ms of CPU (see \"Stream churn\"); closing 10,000 idle streams took about 15 s of the service's CPU (1.5 ms each) and grew its RSS by another 360 MB until a later GC: 10,000 tabs reconnecting at once (a deploy, a network blip) cost the instance tens of seconds of its only core.",
  "- Why presence is slow (direct timings on this machine): a heartbeat runs the cookie's session lookup (a four-table join: 0.48 ms p50 inside PostgreSQL alone, measured with node-postgres), the grants query (0.28 ms) and one Redis script, on top of the HTTP layer, which costs the service about 0.3 to 0.4 ms of CPU per request before any handler work (`GET /api/openapi.json`: about 2,400 to 3,000 requests/s at 90 % of a core; an unknown route: 1,700/s at 67 %), where a bare `node:http` server answers 8,300 requests/s at 50 % of a core.",
  "- What would move the numbers, in src/ (not changed by this bench): drop the per-stream `Stream.merge` (let one instance-wide timer put keep-alive ticks into the same per-workspace PubSub, or write them straight to the responses), so that a stream is one fiber over one queue with one write per chunk; encode each hint once per workspace and hand the same bytes to every stream; cap the Redis inbox and the per-stream lag differently under overload (today the inbox is unbounded, so an overloaded instance falls minutes behind); for presence, cache the session and grants of a principal for a few seconds (or per keep-alive connection), or at least prepare the two statements."
]

/** Replaces the "## Broadcast" section (up to the next "## " heading) or appends it. */
export const writeReport = (file: string, results: Results): string => {
  const section = renderSection(results)
  if (!existsSync(file)) {
    writeFileSync(file, `# Benchmarks\n\n${section}`)
    return file
  }
  const lines = readFileSync(file, "utf8").split("\n")
  const start = lines.findIndex((line) => /^## Broadcast\s*$/.test(line))
  if (start < 0) {
    const body = lines.join("\n").replace(/\n*$/, "")
    writeFileSync(file, `${body}\n\n${section}`)
    return file
  }
  let end = lines.findIndex((line, i) => i > start && /^## /.test(line))
  if (end < 0) end = lines.length
  const before = lines.slice(0, start).join("\n").replace(/\n*$/, "")
  const after = lines.slice(end).join("\n")
  writeFileSync(file, `${before.length > 0 ? `${before}\n\n` : ""}${section}${after.length > 0 ? `\n${after}` : ""}`)
  return file
}
