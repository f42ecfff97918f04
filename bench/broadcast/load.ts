/**
 * The load generator, a process of its own, driven by main.ts over the fork
 * IPC channel (see protocol.ts).
 *
 * - SSE streams: one TCP socket each with a hand-written GET and the session
 *   cookie (sseClient.ts), the body parsed by scanning for blank lines; a
 *   `changed` event's `businessObjectId` is cut out of the data line.
 * - Saves: the service's own unit of work in this process (saver.ts:
 *   UnitOfWork + Records.create with the workspace's admin user as actor),
 *   against the same PostgreSQL and Redis as the server, so a save publishes
 *   through the same outbound bridge and Redis channel as a save over HTTP
 *   would. The commit time is taken right after the unit returns
 *   (COMMIT has been acknowledged, the publish has just been handed off), on
 *   the clock the receipts use: commit -> receipt is measured in one process.
 * - Presence: PUT heartbeats over a keep-alive agent, `concurrency` in flight.
 * - Floor: a bare PUBLISH -> SUBSCRIBE round trip between two ioredis clients
 *   (SPUBLISH -> SSUBSCRIBE on a cluster: floorLink.ts).
 */
import { readFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { Worker } from "node:worker_threads"
import { Schema } from "effect"
import type {
  Command,
  DoneResult,
  FloorResult,
  OpenResult,
  PresenceResult,
  Reply,
  SavesResult,
  Target
} from "./protocol"
import { Command as CommandSchema, PlanJson } from "./protocol"
import { makeFloorLink } from "./floorLink"
import { makeSaver } from "./saver"
import type { SaverEvent, SaverRun } from "./saver"
import type { ReaderCommand, ReaderReply } from "./readerProtocol"
import { now, Samples, sleep } from "./stats"

const planPath = process.argv[2]
if (planPath === undefined) throw new Error("usage: load.ts <plan.json>")
const plan = Schema.decodeUnknownSync(PlanJson)(readFileSync(planPath, "utf8"))

const send = (reply: Reply) => process.send?.(reply)

// ---------------------------------------------------------------------------
// SSE streams, held by reader threads (reader.ts)

const readerCount = Math.max(1, Number(process.env.BENCH_READERS ?? 2))
const readers = Array.from(
  { length: readerCount },
  () =>
    new Worker(new URL("./readerThread.mjs", import.meta.url), {
      workerData: {
        serverPort: plan.serverPort,
        barePort: plan.barePort,
        cookies: plan.workspaces.map((w) => w.cookie),
        workspaceIds: plan.workspaces.map((w) => w.id)
      }
    })
)
const pendingReplies = new Map<number, (reply: ReaderReply) => void>()
let replyId = 1
/** Open streams per workspace, per target and reader (each reader's last count, less the drops since). */
const openByReader: Record<Target, Array<Array<number>>> = {
  server: readers.map(() => plan.workspaces.map(() => 0)),
  bare: readers.map(() => plan.workspaces.map(() => 0))
}
let droppedStreams = 0
readers.forEach((reader, r) => {
  reader.on("message", (reply: ReaderReply) => {
    if (reply._tag === "Dropped") {
      droppedStreams++
      const counts = openByReader[reply.target][r]
      if (counts !== undefined) counts[reply.workspace] = Math.max(0, (counts[reply.workspace] ?? 0) - 1)
      return
    }
    pendingReplies.get(reply.id)?.(reply)
    pendingReplies.delete(reply.id)
  })
  reader.on("error", (error) => {
    send({ _tag: "Failed", id: -1, message: `reader thread ${r}: ${error.message}` })
  })
})

/** Posts a command that answers to one reader and waits for the answer. */
const ask = <T extends ReaderReply["_tag"]>(
  reader: Worker,
  command: (id: number) => ReaderCommand,
  tag: T
): Promise<Extract<ReaderReply, { _tag: T }>> =>
  new Promise((resolve, reject) => {
    const id = replyId++
    pendingReplies.set(id, (reply) => {
      if (reply._tag === tag) resolve(reply as Extract<ReaderReply, { _tag: T }>)
      else reject(new Error(`reader: expected ${tag}, got ${JSON.stringify(reply).slice(0, 300)}`))
    })
    reader.postMessage(command(id))
  })
const tell = (command: ReaderCommand) => {
  for (const reader of readers) reader.postMessage(command)
}

/** Open streams of a workspace on a target, over every reader. */
const openOf = (target: Target, workspace: number) =>
  openByReader[target].reduce((n, counts) => n + (counts[workspace] ?? 0), 0)
const openCount = (target: Target) => plan.workspaces.reduce((n, _, w) => n + openOf(target, w), 0)

const openStreams = async (target: Target, perWorkspace: ReadonlyArray<number>): Promise<OpenResult> => {
  const started = now()
  // Round-robin over the workspaces, so that they fill up evenly, and over the readers.
  const missing = perWorkspace.map((wanted, workspace) => wanted - openOf(target, workspace))
  const todo: Array<Array<number>> = readers.map(() => [])
  let k = 0
  for (let round = 0, most = Math.max(0, ...missing); round < most; round++) {
    missing.forEach((count, workspace) => {
      if (round < count) todo[k++ % readers.length]?.push(workspace)
    })
  }
  const answers = await Promise.all(
    readers.map((reader, r) => ask(reader, (id) => ({ _tag: "Open", id, target, workspaces: todo[r] ?? [] }), "Opened"))
  )
  answers.forEach((answer, r) => {
    openByReader[target][r] = [...answer.perWorkspace]
  })
  return {
    open: openCount(target),
    opened: answers.reduce((n, a) => n + a.opened, 0),
    failed: answers.reduce((n, a) => n + a.failed, 0),
    seconds: (now() - started) / 1000,
    firstError: answers.find((a) => a.firstError !== undefined)?.firstError
  }
}

const closeStreams = async (target: Target) => {
  await Promise.all(readers.map((reader) => ask(reader, (id) => ({ _tag: "CloseAll", id, target }), "Closed")))
  openByReader[target] = readers.map(() => plan.workspaces.map(() => 0))
}

// ---------------------------------------------------------------------------
// Redis floor: PUBLISH (SPUBLISH on a cluster) on one client, receipt on another, one at a time

// Hash-tagged: on a cluster, a sharded channel of one slot.
const floorLink = makeFloorLink(plan.redis, `bench-b:floor:{${process.pid}}`)
let floorWaiting: ((at: number) => void) | undefined
let floorReady: Promise<void> | undefined

const floorConnect = () => (floorReady ??= floorLink.connect(() => floorWaiting?.(now())))

const floorPing = async (): Promise<number> => {
  await floorConnect()
  const received = new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error("floor ping: no message within 5 s")), 5_000)
    floorWaiting = (at) => {
      clearTimeout(timer)
      resolve(at)
    }
  })
  const sent = now()
  await floorLink.publish()
  const at = await received
  floorWaiting = undefined
  return at - sent
}

const floor = async (count: number): Promise<FloorResult> => {
  const samples = new Samples(count)
  for (let i = 0; i < 50; i++) await floorPing()
  for (let i = 0; i < count; i++) samples.push(await floorPing())
  return { latencyMs: samples.summary() }
}

// ---------------------------------------------------------------------------
// Saves (saver.ts)

let onSaver: ((event: SaverEvent) => void) | undefined
const saver = makeSaver(plan, (event) => onSaver?.(event))
const startSaves = (run: SaverRun) => void saver.then((s) => s.run(run))

interface SaveEntry {
  readonly measured: boolean
  /** Open streams of the workspace when the save started: the deliveries it should make. */
  readonly expected: number
  readonly startedAt: number
  committedAt: number
  id: string
  failed: boolean
}

/** A delay from `monitorEventLoopDelay({ resolution: 5 })` (ns, interval included) as ms late. */
const beyondResolution = (ns: number) => (Number.isFinite(ns) ? Math.max(0, ns / 1e6 - 5) : 0)

const runSaves = async (command: Extract<Command, { _tag: "Saves" }>): Promise<SavesResult> => {
  const target = command.target
  const entries = new Map<number, SaveEntry>()
  const durations = new Samples(1 << 14)
  const floorSamples = new Samples(1024)
  let throttled = 0
  let inFlight = 0
  let finished = false
  const droppedBefore = droppedStreams
  const start = now()
  const windowStart = start + command.warmupMs
  const windowEnd = windowStart + command.measureMs
  const eluBefore = readers.map((reader) => reader.performance.eventLoopUtilization())

  tell({ _tag: "Track", target, windowStart, windowEnd })
  // Commits go to every reader in small batches: one message per tick, not one per save.
  let commits: Array<readonly [string, number, boolean]> = []
  const flushCommits = setInterval(() => {
    if (commits.length === 0) return
    tell({ _tag: "Commits", commits })
    commits = []
  }, 1)

  onSaver = (event) => {
    switch (event._tag) {
      case "Started": {
        inFlight++
        entries.set(event.index, {
          measured: event.startedAt >= windowStart && event.startedAt < windowEnd,
          expected: openOf(target, event.workspace),
          startedAt: event.startedAt,
          committedAt: 0,
          id: "",
          failed: false
        })
        return
      }
      case "Throttled":
        throttled++
        return
      case "Committed": {
        inFlight--
        const entry = entries.get(event.index)
        if (entry === undefined) return
        entry.committedAt = event.committedAt
        entry.id = event.id
        if (entry.measured) durations.push(entry.committedAt - entry.startedAt)
        commits.push([event.id, event.committedAt, entry.measured])
        return
      }
      case "Failed": {
        inFlight--
        const entry = entries.get(event.index)
        if (entry !== undefined) entry.failed = true
        return
      }
      case "Finished":
        finished = true
        return
    }
  }
  startSaves({
    phase: command.phase,
    rate: command.rate,
    workspaces: command.workspaces,
    start,
    durationMs: command.warmupMs + command.measureMs
  })

  // How late this thread's event loop runs (it timestamps the commits).
  const loopDelay = monitorEventLoopDelay({ resolution: 5 })
  const windowOpens = setTimeout(() => {
    loopDelay.enable()
    send({ _tag: "Window", phase: command.phase, edge: "start" })
  }, windowStart - now())

  const floorLoop = (async () => {
    if (command.floorRate <= 0) return
    while (now() < windowEnd) {
      const t = now()
      const latency = await floorPing()
      if (t >= windowStart && t < windowEnd) floorSamples.push(latency)
      await sleep(1000 / command.floorRate)
    }
  })()

  await sleep(windowEnd - now())
  loopDelay.disable()
  const elu = readers.map((reader, r) => reader.performance.eventLoopUtilization(eluBefore[r]))
  send({ _tag: "Window", phase: command.phase, edge: "end" })
  clearTimeout(windowOpens)
  while (!finished) await sleep(5)
  onSaver = undefined
  await floorLoop
  // Let the last saves finish and the last hints arrive: at least drainMs; then until every
  // expected hint has arrived, or none has for 5 s (after some did: an overloaded service
  // stalls for seconds at a time), at most 20 s more.
  // What comes later counts as lost.
  await sleep(command.drainMs)
  const drainDeadline = now() + 20_000
  let expectedAll = 0
  for (const entry of entries.values()) expectedAll += entry.committedAt > 0 ? entry.expected : 0
  while (now() < drainDeadline) {
    if (inFlight === 0) {
      const status = await Promise.all(readers.map((reader) => ask(reader, (id) => ({ _tag: "Status", id }), "Status")))
      const receivedAll = status.reduce((n, st) => n + st.receivedAll, 0)
      const lastReceiptAt = Math.max(...status.map((st) => st.lastReceiptAt))
      if (receivedAll >= expectedAll) break
      if (lastReceiptAt > 0 && now() - lastReceiptAt > 5_000) break
    }
    await sleep(50)
  }
  clearInterval(flushCommits)
  if (commits.length > 0) tell({ _tag: "Commits", commits })
  commits = []
  const collected = await Promise.all(
    readers.map((reader) => ask(reader, (id) => ({ _tag: "Collect", id }), "Collected"))
  )
  const latencies = new Samples(1 << 20)
  const receivedById = new Map<string, number>()
  for (const part of collected) {
    latencies.pushAll(part.latencies)
    for (const [id, count] of part.received) receivedById.set(id, (receivedById.get(id) ?? 0) + count)
  }

  const windowSeconds = command.measureMs / 1000
  let expected = 0
  let received = 0
  let measuredSaves = 0
  let failedSaves = 0
  for (const entry of entries.values()) {
    if (!entry.measured) continue
    if (entry.failed || entry.committedAt === 0) {
      failedSaves++
      continue
    }
    measuredSaves++
    expected += entry.expected
    received += Math.min(receivedById.get(entry.id) ?? 0, entry.expected)
  }
  return {
    phase: command.phase,
    target,
    streams: openCount(target),
    targetRate: command.rate,
    achievedRate: measuredSaves / windowSeconds,
    measuredSaves,
    failedSaves,
    throttledSaves: throttled,
    windowSeconds,
    expectedDeliveries: expected,
    receivedDeliveries: received,
    lostDeliveries: expected - received,
    deliveriesPerSecond: collected.reduce((n, c) => n + c.arrivalsInWindow, 0) / windowSeconds,
    strayReceipts: collected.reduce((n, c) => n + c.stray, 0),
    earlyReceipts: collected.reduce((n, c) => n + c.early, 0),
    droppedStreams: droppedStreams - droppedBefore,
    commitToReceiptMs: latencies.summary(),
    saveDurationMs: durations.summary(),
    floorUnderLoadMs: floorSamples.summary(),
    // The histogram holds whole timer intervals (5 ms when on time): keep the delay beyond them.
    loopDelayMs: {
      p50: beyondResolution(loopDelay.percentile(50)),
      p99: beyondResolution(loopDelay.percentile(99)),
      max: beyondResolution(loopDelay.max)
    },
    readerUtilization: elu.map((e) => Math.round(e.utilization * 100))
  }
}

// ---------------------------------------------------------------------------
// Presence heartbeats

interface Answer {
  readonly status: number
  readonly body: string
}

const call = (agent: Agent, method: string, path: string, cookie: string) =>
  new Promise<Answer>((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port: plan.serverPort,
        method,
        path,
        agent,
        headers: { cookie, origin: `http://127.0.0.1:${plan.serverPort}`, "content-length": "0" }
      },
      (response) => {
        let body = ""
        response.setEncoding("utf8")
        response.on("data", (chunk: string) => {
          body += chunk
        })
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body }))
        response.on("error", reject)
      }
    )
    req.setTimeout(10_000, () => req.destroy(new Error("no answer within 10 s")))
    req.on("error", reject)
    req.end()
  })

const runPresence = async (command: Extract<Command, { _tag: "Presence" }>): Promise<PresenceResult> => {
  const [namespace, name] = plan.businessObject.split("/")
  const editors = plan.workspaces.flatMap((w, workspace) =>
    Array.from({ length: command.editorsPerWorkspace }, (_, e) => ({
      cookie: w.cookie,
      path: `/api/presence/${namespace}/${name}/${w.recordIds[e % w.recordIds.length] ?? "x"}/bench-e-${workspace}-${e}`
    }))
  )
  const agent = new Agent({ keepAlive: true, maxSockets: command.concurrency })
  const latencies = new Samples(1 << 17)
  const touched = new Set<number>()
  let completed = 0
  let failed = 0
  let firstError: string | undefined
  let next = 0
  const start = now()
  const windowStart = start + command.warmupMs
  const windowEnd = windowStart + command.measureMs
  let windowOpened = false

  const worker = async () => {
    while (now() < windowEnd) {
      const index = next++ % editors.length
      const editor = editors[index]
      if (editor === undefined) return
      touched.add(index)
      const sent = now()
      if (!windowOpened && sent >= windowStart) {
        windowOpened = true
        send({ _tag: "Window", phase: "presence", edge: "start" })
      }
      try {
        const answer = await call(agent, "PUT", editor.path, editor.cookie)
        const done = now()
        if (answer.status !== 204) {
          failed++
          firstError ??= `PUT ${answer.status} ${answer.body.slice(0, 200)}`
        } else if (sent >= windowStart && done <= windowEnd) {
          completed++
          latencies.push(done - sent)
        }
      } catch (error) {
        failed++
        firstError ??= error instanceof Error ? error.message : String(error)
      }
    }
  }
  await Promise.all(Array.from({ length: command.concurrency }, worker))
  send({ _tag: "Window", phase: "presence", edge: "end" })

  // Every editor that arrived leaves again (and main.ts deletes the keys in any case).
  const leaving = [...touched]
  let left = 0
  const leaver = async () => {
    for (let index = leaving.pop(); index !== undefined; index = leaving.pop()) {
      const editor = editors[index]
      if (editor === undefined) continue
      const answer = await call(agent, "DELETE", editor.path, editor.cookie).catch(() => undefined)
      if (answer?.status === 204) left++
    }
  }
  await Promise.all(Array.from({ length: command.concurrency }, leaver))
  agent.destroy()

  const windowSeconds = command.measureMs / 1000
  return {
    concurrency: command.concurrency,
    editors: editors.length,
    windowSeconds,
    completed,
    perSecond: completed / windowSeconds,
    failed,
    firstError,
    latencyMs: latencies.summary(),
    left
  }
}

// ---------------------------------------------------------------------------
// Command loop: one command at a time, in order

const handle = async (command: Command): Promise<DoneResult> => {
  switch (command._tag) {
    case "Floor":
      return { _tag: "Floor", value: await floor(command.count) }
    case "Open":
      return { _tag: "Open", value: await openStreams(command.target, command.perWorkspace) }
    case "CloseAll":
      await closeStreams(command.target)
      return { _tag: "Nothing" }
    case "Saves":
      return { _tag: "Saves", value: await runSaves(command) }
    case "Presence":
      return { _tag: "Presence", value: await runPresence(command) }
    case "Exit":
      return { _tag: "Nothing" }
  }
}

let shuttingDown = false
const shutdown = async (code: number) => {
  if (shuttingDown) return
  shuttingDown = true
  const hardStop = setTimeout(() => process.exit(code), 15_000)
  hardStop.unref()
  // Ending a reader thread closes its sockets.
  await Promise.all(readers.map((reader) => reader.terminate())).catch(() => undefined)
  floorLink.disconnect()
  await saver.then((s) => s.dispose()).catch(() => undefined)
  process.exit(code)
}

let queue = Promise.resolve()
process.on("message", (raw: unknown) => {
  const decoded = Schema.decodeUnknownResult(CommandSchema)(raw)
  if (decoded._tag === "Failure") {
    send({ _tag: "Failed", id: -1, message: `load: undecodable command ${JSON.stringify(raw)}` })
    return
  }
  const command = decoded.success
  queue = queue.then(async () => {
    try {
      const result = await handle(command)
      send({ _tag: "Done", id: command.id, result })
      if (command._tag === "Exit") await shutdown(0)
    } catch (error) {
      send({
        _tag: "Failed",
        id: command.id,
        message: error instanceof Error ? (error.stack ?? error.message) : String(error)
      })
    }
  })
})
process.on("disconnect", () => void shutdown(1))
process.on("SIGTERM", () => void shutdown(1))

// The saver builds its services (pool, Redis clients) before saying ready.
saver
  .then(() => send({ _tag: "Ready" }))
  .catch((error: unknown) => {
    send({ _tag: "Failed", id: -1, message: `load: services failed to start: ${String(error)}` })
    void shutdown(1)
  })
