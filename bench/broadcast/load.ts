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
 * - Floor: a bare PUBLISH -> SUBSCRIBE round trip between two ioredis clients.
 */
import { readFileSync } from "node:fs"
import { Agent, request } from "node:http"
import { monitorEventLoopDelay } from "node:perf_hooks"
import type { Socket } from "node:net"
import { Schema } from "effect"
import { Redis } from "ioredis"
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
import { makeSaver } from "./saver"
import type { SaverEvent, SaverRun } from "./saver"
import { openSse } from "./sseClient"
import { now, Samples, sleep } from "./stats"

const planPath = process.argv[2]
if (planPath === undefined) throw new Error("usage: load.ts <plan.json>")
const plan = Schema.decodeUnknownSync(PlanJson)(readFileSync(planPath, "utf8"))

const send = (reply: Reply) => process.send?.(reply)

// ---------------------------------------------------------------------------
// SSE streams

interface Stream {
  readonly workspace: number
  readonly target: Target
  readonly socket: Socket
  /** Text after the last complete event. */
  rest: string
  /** Closed on purpose: its end is not a drop. */
  closing: boolean
  ended: boolean
}

const streams: Record<Target, Array<Array<Stream>>> = {
  server: plan.workspaces.map(() => []),
  bare: plan.workspaces.map(() => [])
}
let droppedStreams = 0
const openCount = (target: Target) => streams[target].reduce((n, list) => n + list.length, 0)

/** Set while saves run: called with each `changed` hint's record id and the time its chunk arrived. */
let onChanged: ((id: string, at: number) => void) | undefined

const idMarker = '"businessObjectId":"'

const onEvent = (message: string, at: number) => {
  if (!message.startsWith("event: changed\n")) return
  const start = message.indexOf(idMarker)
  if (start < 0) return
  const from = start + idMarker.length
  onChanged?.(message.slice(from, message.indexOf('"', from)), at)
}

const onChunk = (stream: Stream, chunk: string) => {
  const at = now()
  let text = stream.rest.length === 0 ? chunk : stream.rest + chunk
  let end = text.indexOf("\n\n")
  while (end >= 0) {
    onEvent(text.slice(0, end), at)
    text = text.slice(end + 2)
    end = text.indexOf("\n\n")
  }
  stream.rest = text
}

const openStream = (workspace: number, target: Target) =>
  new Promise<Stream>((resolve, reject) => {
    const port = target === "server" ? plan.serverPort : plan.barePort
    // Data arrives on a later tick, when `opened` exists.
    const connection = openSse(
      port,
      "/api/broadcast",
      { cookie: plan.workspaces[workspace]?.cookie ?? "", accept: "text/event-stream" },
      (text) => onChunk(opened, text)
    )
    const opened: Stream = { workspace, target, socket: connection.socket, rest: "", closing: false, ended: false }
    let connected = false
    const timer = setTimeout(() => {
      connection.socket.destroy(new Error("no ': connected' within 30 s"))
    }, 30_000)
    connection.connected.then(
      () => {
        connected = true
        clearTimeout(timer)
        resolve(opened)
      },
      (error: unknown) => {
        clearTimeout(timer)
        reject(error)
      }
    )
    connection.socket.on("error", () => undefined)
    connection.socket.on("close", () => {
      opened.ended = true
      const list = streams[target][workspace]
      const index = list?.indexOf(opened) ?? -1
      if (list !== undefined && index >= 0) list.splice(index, 1)
      if (connected && !opened.closing) droppedStreams++
    })
  })

const openStreams = async (target: Target, perWorkspace: ReadonlyArray<number>): Promise<OpenResult> => {
  const started = now()
  // Round-robin over the workspaces, so that they fill up evenly.
  const missing = perWorkspace.map((wanted, workspace) => wanted - (streams[target][workspace]?.length ?? 0))
  const todo: Array<number> = []
  for (let round = 0, most = Math.max(0, ...missing); round < most; round++) {
    missing.forEach((count, workspace) => {
      if (round < count) todo.push(workspace)
    })
  }
  let opened = 0
  let failed = 0
  let firstError: string | undefined
  let next = 0
  const worker = async () => {
    while (next < todo.length) {
      const workspace = todo[next++] ?? 0
      try {
        const stream = await openStream(workspace, target)
        if (stream.ended) {
          failed++
        } else {
          streams[target][workspace]?.push(stream)
          opened++
        }
      } catch (error) {
        failed++
        firstError ??= error instanceof Error ? error.message : String(error)
      }
    }
  }
  await Promise.all(Array.from({ length: 100 }, worker))
  return { open: openCount(target), opened, failed, seconds: (now() - started) / 1000, firstError }
}

const closeStreams = async (target: Target) => {
  const all = streams[target].flat()
  for (const stream of all) {
    stream.closing = true
    stream.socket.destroy()
  }
  const deadline = now() + 30_000
  while (openCount(target) > 0 && now() < deadline) await sleep(50)
}

// ---------------------------------------------------------------------------
// Redis floor: PUBLISH on one client, receipt on another, one at a time

const floorChannel = `bench-b:floor:${process.pid}`
const floorPublisher = new Redis(plan.redisUrl, { lazyConnect: true })
const floorSubscriber = new Redis(plan.redisUrl, { lazyConnect: true })
let floorWaiting: ((at: number) => void) | undefined
let floorReady: Promise<void> | undefined

const floorConnect = () =>
  (floorReady ??= (async () => {
    await Promise.all([floorPublisher.connect(), floorSubscriber.connect()])
    floorSubscriber.on("message", (channel: string) => {
      if (channel === floorChannel) floorWaiting?.(now())
    })
    await floorSubscriber.subscribe(floorChannel)
  })())

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
  await floorPublisher.publish(floorChannel, "ping")
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
  failed: boolean
  received: number
}

/** A delay from `monitorEventLoopDelay({ resolution: 5 })` (ns, interval included) as ms late. */
const beyondResolution = (ns: number) => (Number.isFinite(ns) ? Math.max(0, ns / 1e6 - 5) : 0)

const runSaves = async (command: Extract<Command, { _tag: "Saves" }>): Promise<SavesResult> => {
  const byId = new Map<string, SaveEntry>()
  /** Receipts of a record whose save has not yet reported its id (expected: none). */
  const unmatched = new Map<string, Array<number>>()
  const entries = new Map<number, SaveEntry>()
  const latencies = new Samples(1 << 20)
  const durations = new Samples(1 << 14)
  const floorSamples = new Samples(1024)
  let early = 0
  let throttled = 0
  let inFlight = 0
  let finished = false
  const droppedBefore = droppedStreams
  const start = now()
  const windowStart = start + command.warmupMs
  const windowEnd = windowStart + command.measureMs
  let lastReceiptAt = 0
  let arrivalsInWindow = 0
  let receivedAll = 0

  const receive = (entry: SaveEntry, at: number) => {
    entry.received++
    receivedAll++
    if (!entry.measured) return
    if (at < entry.committedAt) early++
    latencies.push(Math.max(0, at - entry.committedAt))
  }

  onChanged = (id, at) => {
    lastReceiptAt = at
    if (at >= windowStart && at < windowEnd) arrivalsInWindow++
    const entry = byId.get(id)
    if (entry !== undefined) return receive(entry, at)
    const waiting = unmatched.get(id)
    if (waiting === undefined) unmatched.set(id, [at])
    else waiting.push(at)
  }

  onSaver = (event) => {
    switch (event._tag) {
      case "Started": {
        inFlight++
        entries.set(event.index, {
          measured: event.startedAt >= windowStart && event.startedAt < windowEnd,
          expected: streams.server[event.workspace]?.length ?? 0,
          startedAt: event.startedAt,
          committedAt: 0,
          failed: false,
          received: 0
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
        if (entry.measured) durations.push(entry.committedAt - entry.startedAt)
        byId.set(event.id, entry)
        const waiting = unmatched.get(event.id)
        if (waiting !== undefined) {
          unmatched.delete(event.id)
          for (const at of waiting) receive(entry, at)
        }
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

  // How late this process's own event loop runs: a receipt is timestamped only when the loop gets to it.
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
  const expectedAll = () => {
    let total = 0
    for (const entry of entries.values()) total += entry.committedAt > 0 ? entry.expected : 0
    return total
  }
  while (now() < drainDeadline) {
    if (inFlight === 0) {
      if (receivedAll >= expectedAll()) break
      if (lastReceiptAt > 0 && now() - lastReceiptAt > 5_000) break
    }
    await sleep(50)
  }
  onChanged = undefined

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
    received += Math.min(entry.received, entry.expected)
  }
  let stray = 0
  for (const waiting of unmatched.values()) stray += waiting.length
  return {
    phase: command.phase,
    streams: openCount("server"),
    targetRate: command.rate,
    achievedRate: measuredSaves / windowSeconds,
    measuredSaves,
    failedSaves,
    throttledSaves: throttled,
    windowSeconds,
    expectedDeliveries: expected,
    receivedDeliveries: received,
    lostDeliveries: expected - received,
    deliveriesPerSecond: arrivalsInWindow / windowSeconds,
    strayReceipts: stray,
    earlyReceipts: early,
    droppedStreams: droppedStreams - droppedBefore,
    commitToReceiptMs: latencies.summary(),
    saveDurationMs: durations.summary(),
    floorUnderLoadMs: floorSamples.summary(),
    // The histogram holds whole timer intervals (5 ms when on time): keep the delay beyond them.
    loopDelayMs: {
      p50: beyondResolution(loopDelay.percentile(50)),
      p99: beyondResolution(loopDelay.percentile(99)),
      max: beyondResolution(loopDelay.max)
    }
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
      { host: "127.0.0.1", port: plan.serverPort, method, path, agent, headers: { cookie, "content-length": "0" } },
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
  for (const target of ["server", "bare"] as const) {
    for (const stream of streams[target].flat()) {
      stream.closing = true
      stream.socket.destroy()
    }
  }
  floorPublisher.disconnect()
  floorSubscriber.disconnect()
  await saver.then((s) => s.dispose()).catch(() => undefined)
  process.exit(code)
}

let queue = Promise.resolve()
process.on("message", (raw: unknown) => {
  const decoded = Schema.decodeUnknownEither(CommandSchema)(raw)
  if (decoded._tag === "Left") {
    send({ _tag: "Failed", id: -1, message: `load: undecodable command ${JSON.stringify(raw)}` })
    return
  }
  const command = decoded.right
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
