/**
 * A reader thread of the load generator (load.ts starts several): it holds
 * its share of the SSE streams and reads their events, so that reading
 * 50,000 events/s is spread over threads and never limits the bench. The
 * saver (in load.ts) tells every reader each save's record id and commit
 * time as it commits; a reader matches its receipts to them itself, so only
 * one message per save crosses threads, not one per delivery.
 */
import { parentPort, workerData } from "node:worker_threads"
import type { Socket } from "node:net"
import { openSse } from "./sseClient"
import { now, Samples, sleep } from "./stats"
import type { ReaderCommand, ReaderReply, Target } from "./readerProtocol"

const port = parentPort
if (port === null) throw new Error("reader.ts runs as a worker thread")
const { serverPort, barePort, cookies, workspaceIds } = workerData as {
  readonly serverPort: number
  readonly barePort: number
  readonly cookies: ReadonlyArray<string>
  readonly workspaceIds: ReadonlyArray<string>
}
const send = (reply: ReaderReply, transfer: ReadonlyArray<ArrayBuffer> = []) => port.postMessage(reply, [...transfer])

interface Stream {
  readonly workspace: number
  readonly target: Target
  readonly socket: Socket
  rest: string
  closing: boolean
  ended: boolean
}

const streams: Record<Target, Array<Array<Stream>>> = {
  server: cookies.map(() => []),
  bare: cookies.map(() => [])
}
const openCount = (target: Target) => streams[target].reduce((n, list) => n + list.length, 0)
let dropped = 0

// ---------------------------------------------------------------------------
// Receipts

interface Commit {
  readonly committedAt: number
  readonly measured: boolean
  received: number
}

let tracking:
  | {
      readonly target: Target
      readonly windowStart: number
      readonly windowEnd: number
      readonly commits: Map<string, Commit>
      readonly unmatched: Map<string, Array<number>>
      readonly latencies: Samples
      arrivalsInWindow: number
      receivedAll: number
      early: number
      lastReceiptAt: number
    }
  | undefined

const receive = (commit: Commit, at: number) => {
  if (tracking === undefined) return
  commit.received++
  tracking.receivedAll++
  if (!commit.measured) return
  if (at < commit.committedAt) tracking.early++
  tracking.latencies.push(Math.max(0, at - commit.committedAt))
}

const idMarker = '"businessObjectId":"'

const onEvent = (message: string, at: number) => {
  if (tracking === undefined || !message.startsWith("event: changed\n")) return
  const start = message.indexOf(idMarker)
  if (start < 0) return
  const from = start + idMarker.length
  const id = message.slice(from, message.indexOf('"', from))
  tracking.lastReceiptAt = at
  if (at >= tracking.windowStart && at < tracking.windowEnd) tracking.arrivalsInWindow++
  const commit = tracking.commits.get(id)
  if (commit !== undefined) return receive(commit, at)
  const waiting = tracking.unmatched.get(id)
  if (waiting === undefined) tracking.unmatched.set(id, [at])
  else waiting.push(at)
}

const onChunk = (stream: Stream, chunk: string) => {
  // Only the streams of the target being measured count.
  if (tracking !== undefined && tracking.target !== stream.target) return
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

// ---------------------------------------------------------------------------
// Streams

const openStream = (workspace: number, target: Target) =>
  new Promise<Stream>((resolve, reject) => {
    const path =
      target === "server"
        ? "/api/broadcast"
        : `/api/broadcast?workspace=${encodeURIComponent(workspaceIds[workspace] ?? "")}`
    const connection = openSse(
      target === "server" ? serverPort : barePort,
      path,
      { cookie: cookies[workspace] ?? "", accept: "text/event-stream" },
      (text) => onChunk(opened, text)
    )
    const opened: Stream = { workspace, target, socket: connection.socket, rest: "", closing: false, ended: false }
    let connected = false
    const timer = setTimeout(() => connection.socket.destroy(new Error("no ': connected' within 30 s")), 30_000)
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
      if (connected && !opened.closing) {
        dropped++
        send({ _tag: "Dropped", target, workspace })
      }
    })
  })

const openStreams = async (target: Target, todo: ReadonlyArray<number>) => {
  let opened = 0
  let failed = 0
  let firstError: string | undefined
  let next = 0
  const worker = async () => {
    while (next < todo.length) {
      const workspace = todo[next++] ?? 0
      try {
        const stream = await openStream(workspace, target)
        if (stream.ended) failed++
        else {
          streams[target][workspace]?.push(stream)
          opened++
        }
      } catch (error) {
        failed++
        firstError ??= error instanceof Error ? error.message : String(error)
      }
    }
  }
  await Promise.all(Array.from({ length: 50 }, worker))
  return {
    opened,
    failed,
    firstError,
    perWorkspace: streams[target].map((list) => list.length)
  }
}

const closeStreams = async (target: Target) => {
  for (const stream of streams[target].flat()) {
    stream.closing = true
    stream.socket.destroy()
  }
  const deadline = now() + 30_000
  while (openCount(target) > 0 && now() < deadline) await sleep(50)
}

// ---------------------------------------------------------------------------
// Commands

const handle = async (command: ReaderCommand): Promise<void> => {
  switch (command._tag) {
    case "Open":
      return send({ _tag: "Opened", id: command.id, ...(await openStreams(command.target, command.workspaces)) })
    case "CloseAll":
      await closeStreams(command.target)
      return send({ _tag: "Closed", id: command.id })
    case "Track":
      tracking = {
        target: command.target,
        windowStart: command.windowStart,
        windowEnd: command.windowEnd,
        commits: new Map(),
        unmatched: new Map(),
        latencies: new Samples(1 << 18),
        arrivalsInWindow: 0,
        receivedAll: 0,
        early: 0,
        lastReceiptAt: 0
      }
      return
    case "Commits": {
      if (tracking === undefined) return
      for (const [id, committedAt, measured] of command.commits) {
        const commit: Commit = { committedAt, measured, received: 0 }
        tracking.commits.set(id, commit)
        const waiting = tracking.unmatched.get(id)
        if (waiting !== undefined) {
          tracking.unmatched.delete(id)
          for (const at of waiting) receive(commit, at)
        }
      }
      return
    }
    case "Status":
      return send({
        _tag: "Status",
        id: command.id,
        receivedAll: tracking?.receivedAll ?? 0,
        lastReceiptAt: tracking?.lastReceiptAt ?? 0
      })
    case "Collect": {
      const t = tracking
      tracking = undefined
      if (t === undefined) return send({ _tag: "Failed", id: command.id, message: "not tracking" })
      const latencies = Float64Array.from(t.latencies.raw())
      let stray = 0
      for (const waiting of t.unmatched.values()) stray += waiting.length
      const received: Array<[string, number]> = []
      for (const [id, commit] of t.commits) if (commit.received > 0) received.push([id, commit.received])
      return send(
        {
          _tag: "Collected",
          id: command.id,
          latencies,
          received,
          arrivalsInWindow: t.arrivalsInWindow,
          early: t.early,
          stray,
          dropped
        },
        [latencies.buffer]
      )
    }
  }
}

port.on("message", (command: ReaderCommand) => {
  handle(command).catch((error: unknown) =>
    send({ _tag: "Failed", id: "id" in command ? command.id : -1, message: String(error) })
  )
})
