/**
 * `npm run bench:reconnect`: how the tabs of one instance come back after
 * their connections drop at once (issue 15, "Reconnect spread").
 *
 * The service runs in this process (appLayer, real PostgreSQL and Redis, a
 * free port); a TCP proxy of the bench's own stands between it and
 * `--clients=N` (200) streams of one signed-in user. Each client behaves as
 * `EventSource` does: it keeps the last `retry:` the stream sent and, when the
 * connection drops, opens a new one after that many milliseconds (3,000, a
 * browser's default, when the stream sent none). Once every stream has its
 * first `resync`, the proxy destroys every connection in the same instant;
 * the bench records when each client opens again and prints the histogram.
 * Fails (exit 1) unless the reconnects spread over at least 2 s. Rewrites the
 * "Reconnect spread" section of BENCHMARKS.md (other sections are kept);
 * `--no-report` leaves it alone.
 */
import * as Sse from "effect/encoding/Sse"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { Duration, Effect, Layer, ManagedRuntime, Option, Redacted, References } from "effect"
import { randomBytes } from "node:crypto"
import { createServer, connect } from "node:net"
import type { Socket } from "node:net"
import { appLayer } from "../src/app/AppLayer"
import { Members } from "../src/auth/Members"
import { Sessions } from "../src/auth/Sessions"
import { Users } from "../src/auth/Users"
import { AppConfig } from "../src/config/AppConfig"
import { platformSchema } from "../src/tenancy/migrations/platform"
import { Workspaces } from "../src/tenancy/Workspaces"
import { writeBenchmarkSection } from "./benchmarksFile"

const databaseUrl = process.env.BENCH_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379"
const argv = process.argv.slice(2)
const clients = Number(argv.find((a) => a.startsWith("--clients="))?.slice("--clients=".length) ?? "200")
const writesReport = !argv.includes("--no-report")
/** What a browser's EventSource waits when the stream named no `retry`. */
const defaultRetryMs = 3_000
const bucketMs = 250
const requiredSpreadMs = 2_000

const log = (line: string) => console.log(`[bench:reconnect] ${line}`)

const app = appLayer(
  AppConfig.make({
    databaseUrl: Option.some(Redacted.make(databaseUrl)),
    redisUrl: Option.some(Redacted.make(redisUrl)),
    host: "127.0.0.1",
    port: 0,
    maxStreamsPerSession: clients * 2,
    queuePrefix: `bench-reconnect-${randomBytes(4).toString("hex")}`
  })
).pipe(Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn")))

/** A workspace, a member and a session of theirs (minted directly: no sign-in throttle to trip). */
const setUp = Effect.gen(function* () {
  const suffix = randomBytes(4).toString("hex")
  const workspace = yield* (yield* Workspaces).create(`bench-r-${suffix}`)
  const user = yield* (yield* Users).create({
    email: `bench-r-${suffix}@example.com`,
    name: "Bench Reconnect",
    password: randomBytes(12).toString("hex")
  })
  yield* (yield* Members).add(workspace, user.id, "admin")
  const token = yield* (yield* Sessions).start(user.id, workspace.id, Duration.hours(1))
  const { address } = yield* HttpServer.HttpServer
  const port = address._tag === "UnixPathAddress" ? 0 : address.port
  return { workspace, user, cookie: `session=${token}`, port }
}).pipe(Effect.provide(Sessions.layer))

const tearDown = (data: Effect.Success<typeof setUp>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    yield* (yield* Workspaces).drop(data.workspace)
    yield* sql`DELETE FROM ${sql(`${platformSchema}.users`)} WHERE id = ${data.user.id}`.pipe(Effect.orDie)
  })

/** A TCP proxy to `port` whose `dropAll` destroys every connection through it at once. */
const startProxy = (port: number) =>
  new Promise<{ port: number; dropAll: () => number; close: () => void }>((resolve) => {
    const pairs = new Set<readonly [Socket, Socket]>()
    const server = createServer((client) => {
      const upstream = connect({ host: "127.0.0.1", port })
      const pair = [client, upstream] as const
      pairs.add(pair)
      const end = () => {
        pairs.delete(pair)
        client.destroy()
        upstream.destroy()
      }
      client.on("error", end).on("close", end)
      upstream.on("error", end).on("close", end)
      client.pipe(upstream)
      upstream.pipe(client)
    })
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve({
        port: typeof address === "object" && address !== null ? address.port : 0,
        dropAll: () => {
          const dropped = pairs.size
          for (const [client, upstream] of [...pairs]) {
            client.destroy()
            upstream.destroy()
          }
          return dropped
        },
        close: () => server.close()
      })
    })
  })

/** One EventSource-like client: reconnects after the last `retry` it was sent. */
class Client {
  retryMs: number | undefined
  /** When each connection attempt began (performance.now()). */
  readonly attempts: Array<number> = []
  /** Resolves at each stream's first event. */
  private onFirstEvent: (() => void) | undefined
  private stopped = false
  private readonly controller = new AbortController()

  constructor(
    private readonly url: string,
    private readonly cookie: string
  ) {}

  /** Opens the stream; resolves once its first event (the `resync`) has arrived. */
  open(): Promise<void> {
    return new Promise((resolve) => {
      this.onFirstEvent = resolve
      void this.connect()
    })
  }

  stop() {
    this.stopped = true
    this.controller.abort()
  }

  private async connect(): Promise<void> {
    if (this.stopped) return
    this.attempts.push(performance.now())
    let first = true
    const parser = Sse.makeParser((event) => {
      if (event._tag === "Retry") this.retryMs = Duration.toMillis(event.duration)
      else if (first) {
        first = false
        this.onFirstEvent?.()
      }
    })
    try {
      const response = await fetch(this.url, { headers: { cookie: this.cookie }, signal: this.controller.signal })
      if (response.body === null || !response.ok) throw new Error(`status ${response.status}`)
      const reader = response.body.getReader()
      const decoder = new TextDecoder()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        parser.feed(decoder.decode(value, { stream: true }))
      }
    } catch {
      // dropped: reconnect below, as EventSource does
    }
    if (this.stopped) return
    setTimeout(() => void this.connect(), this.retryMs ?? defaultRetryMs)
  }
}

const histogram = (offsets: ReadonlyArray<number>) => {
  const buckets = new Map<number, number>()
  for (const offset of offsets) {
    const bucket = Math.floor(offset / bucketMs) * bucketMs
    buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1)
  }
  const widest = Math.max(...buckets.values())
  const first = Math.min(...buckets.keys())
  const last = Math.max(...buckets.keys())
  const rows: Array<string> = []
  for (let bucket = first; bucket <= last; bucket += bucketMs) {
    const count = buckets.get(bucket) ?? 0
    const bar = "#".repeat(Math.round((count / widest) * 50))
    rows.push(
      `${String(bucket).padStart(5)}-${String(bucket + bucketMs - 1).padEnd(5)} ms ${String(count).padStart(4)} ${bar}`
    )
  }
  return rows.join("\n")
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN

const main = async () => {
  const runtime = ManagedRuntime.make(app)
  const data = await runtime.runPromise(setUp)
  const proxy = await startProxy(data.port)
  const url = `http://127.0.0.1:${proxy.port}/api/broadcast`
  const all = Array.from({ length: clients }, () => new Client(url, data.cookie))
  try {
    log(`opening ${clients} streams through the proxy`)
    await Promise.all(all.map((client) => client.open()))
    const retries = all.map((client) => client.retryMs ?? defaultRetryMs).sort((a, b) => a - b)
    log(`every stream open; retry sent: min ${retries[0]} ms, max ${retries.at(-1)} ms`)

    const droppedAt = performance.now()
    const dropped = proxy.dropAll()
    log(`dropped ${dropped} connections at once`)
    const deadline = droppedAt + 30_000
    while (all.some((client) => client.attempts.length < 2) && performance.now() < deadline) {
      await new Promise((done) => setTimeout(done, 50))
    }
    const offsets = all
      .map((client) => client.attempts[1])
      .filter((at): at is number => at !== undefined)
      .map((at) => Math.round(at - droppedAt))
      .sort((a, b) => a - b)
    const spread = (offsets.at(-1) ?? 0) - (offsets[0] ?? 0)
    const pass = offsets.length === clients && spread >= requiredSpreadMs
    const summary =
      `${offsets.length} of ${clients} clients reconnected, from ${offsets[0]} ms to ${offsets.at(-1)} ms after the drop ` +
      `(spread ${spread} ms; p50 ${percentile(offsets, 50)} ms, p90 ${percentile(offsets, 90)} ms); ` +
      `at most ${Math.max(...countsPer(offsets, bucketMs))} in one ${bucketMs} ms window`
    const chart = histogram(offsets)
    console.log(`\nReconnects after the drop, per ${bucketMs} ms:\n${chart}\n`)
    log(summary)
    log(pass ? `PASS: spread over at least ${requiredSpreadMs} ms` : `FAIL: spread under ${requiredSpreadMs} ms`)
    if (writesReport) writeBenchmarkSection("Reconnect spread", section(chart, summary, pass))
    if (!pass) process.exitCode = 1
  } finally {
    for (const client of all) client.stop()
    proxy.close()
    await runtime.runPromise(tearDown(data))
    await runtime.dispose()
  }
}

const countsPer = (offsets: ReadonlyArray<number>, width: number) => {
  const counts = new Map<number, number>()
  for (const offset of offsets)
    counts.set(Math.floor(offset / width), (counts.get(Math.floor(offset / width)) ?? 0) + 1)
  return [...counts.values()]
}

const section = (chart: string, summary: string, pass: boolean) => `## Reconnect spread

\`npm run bench:reconnect\` (${new Date().toISOString().slice(0, 10)}, Node ${process.versions.node}): ${clients}
streams of one session on one instance (real PostgreSQL and Redis), through a
TCP proxy that then destroys every connection in the same instant. Each
client reconnects as \`EventSource\` does, after the last \`retry:\` its stream
sent (\`STREAM_RETRY_MIN_MS\`-\`STREAM_RETRY_MAX_MS\`, 1-5 s, drawn per
stream). Before, the stream sent no \`retry:\`: every client came back after
the browser's default (3 s) in the same instant.

${summary}: **${pass ? "PASS" : "FAIL"}** (at least ${requiredSpreadMs / 1_000} s).

\`\`\`
${chart}
\`\`\`
`

main().catch((error: unknown) => {
  console.error(error)
  process.exit(1)
})
