import { execFile, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { createServer } from "node:net"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, HashMap, Layer, Logger, Option, Redacted } from "effect"
import type { LoginThrottleStore } from "../../src/auth/LoginThrottleStore"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { PubSubUnavailable } from "../../src/errors"
import type { PresenceStore } from "../../src/presence/PresenceStore"
import { PubSubLive } from "../../src/redis/PubSubLive"
import { baseUrl, freshWorkspace, testApp, testPassword } from "../support/TestApp"
import { clientFor, createRecord, expectStatus, signedInMember, timelineOf } from "../support/api"
import type { RecordBody } from "../support/api"
import { signIn } from "../support/http"
import { openSse } from "../support/sse"
import { awaitHint, changed, eventually, probe } from "./streamHelpers"

const deal = "crm/deal"

// ---------------------------------------------------------------------------
// Logs

interface Logged {
  readonly level: string
  readonly message: ReadonlyArray<unknown>
  readonly annotations: Readonly<Record<string, unknown>>
}

/** A logger that keeps what it is given; add it to an app with `Layer.provide(collected.layer)`. */
const collectLogs = () => {
  const entries: Array<Logged> = []
  const logger = Logger.make<unknown, void>(({ logLevel, message, annotations }) => {
    const parts: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
    entries.push({
      level: logLevel.label,
      message: parts,
      annotations: Object.fromEntries(HashMap.toEntries(annotations))
    })
  })
  return { entries, layer: Logger.add(logger) }
}

/**
 * The warning of a failed publish about one record. The workspace may be
 * named by its id or its slug (the spec only asks that it be named).
 */
const isPublishFailure = (entry: Logged, workspace: { readonly id: string; readonly slug: string }, businessObjectId: string) =>
  entry.level === "WARN" &&
  typeof entry.message[0] === "string" &&
  entry.message[0].endsWith("broadcast publish failed") &&
  (entry.annotations.workspace === workspace.id || entry.annotations.workspace === workspace.slug) &&
  entry.annotations.businessObject === deal &&
  entry.annotations.businessObjectId === businessObjectId

// ---------------------------------------------------------------------------
// An app whose broadcast publish always fails

/**
 * The real Redis bus, presence store and login throttle (PubSubLive), with the bus's
 * `publish` replaced by one that fails as an unreachable store does.
 */
const PublishAlwaysFails = Layer.effectContext(
  Effect.gen(function* () {
    const context = yield* Effect.context<BroadcastBus | PresenceStore | LoginThrottleStore>()
    const bus = Context.get(context, BroadcastBus)
    return Context.add(
      context,
      BroadcastBus,
      BroadcastBus.of({
        ...bus,
        publish: () => Effect.fail(new PubSubUnavailable({ message: "redis: publish refused by the test" }))
      })
    )
  })
).pipe(Layer.provide(PubSubLive))

// ---------------------------------------------------------------------------
// A redis-server of the test's own

const freePort = Effect.async<number, Error>((resume) => {
  const server = createServer()
  server.once("error", (error) => resume(Effect.fail(error)))
  server.listen(0, "127.0.0.1", () => {
    const address = server.address()
    const port = typeof address === "object" && address !== null ? address.port : 0
    server.close(() => resume(port > 0 ? Effect.succeed(port) : Effect.fail(new Error("no port"))))
  })
})

const exited = (child: ChildProcess) =>
  Effect.async<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const onExit = () => resume(Effect.void)
    child.once("exit", onExit)
    return Effect.sync(() => child.off("exit", onExit))
  })

/** Signals the process and waits for it to be gone (SIGKILL after 5 s). */
const terminate = (child: ChildProcess, signal: NodeJS.Signals) =>
  Effect.sync(() => child.kill(signal)).pipe(
    Effect.zipRight(exited(child)),
    Effect.timeout("5 seconds"),
    Effect.catchAll(() => Effect.sync(() => child.kill("SIGKILL")).pipe(Effect.zipRight(exited(child))))
  )

/** Runs `redis-cli -p <port> <args>`; its output, trimmed. */
const redisCli = (port: number, ...args: ReadonlyArray<string>) =>
  Effect.async<string, Error>((resume) => {
    const child = execFile("redis-cli", ["-p", String(port), ...args], { timeout: 2_000 }, (error, stdout) =>
      resume(error ? Effect.fail(error) : Effect.succeed(stdout.trim()))
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/**
 * A redis-server on a free port, no persistence. `stop` ends it (SIGTERM: a
 * clean shutdown, nothing saved); `start` starts it again on the same port.
 * Whatever is running when the scope closes is killed.
 */
const ownRedis = Effect.gen(function* () {
  const port = yield* freePort
  let current: ChildProcess | undefined
  yield* Effect.addFinalizer(() => Effect.suspend(() => (current === undefined ? Effect.void : terminate(current, "SIGKILL"))))

  const start = Effect.gen(function* () {
    const launched = yield* Effect.sync(() => {
      const child = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
        stdio: ["ignore", "pipe", "pipe"]
      })
      current = child
      let output = ""
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
          output += chunk
          if (output.includes("Ready to accept connections")) resolve()
        })
        child.once("error", reject)
        child.once("exit", (code) => reject(new Error(`redis-server on ${port} exited (${String(code)}): ${output}`)))
      })
      ready.catch(() => undefined)
      return ready
    })
    yield* Effect.tryPromise(() => launched).pipe(Effect.timeout("10 seconds"), Effect.orDie)
  })

  const stop = Effect.suspend(() => {
    const child = current
    current = undefined
    return child === undefined ? Effect.void : terminate(child, "SIGTERM")
  })

  /** How many clients of this Redis are subscribed to the broadcast channel. */
  const subscribers = Effect.map(redisCli(port, "pubsub", "numsub", "broadcast"), (out) => Number(out.split("\n")[1]))

  yield* start
  return { port, url: `redis://127.0.0.1:${port}`, start, stop, subscribers }
})

// ---------------------------------------------------------------------------

describe("broadcast when the shared pub/sub store misbehaves", () => {
  it.scopedLive("rule 3: the local save never depends on the publish; a failed publish is logged with the workspace and the object", () =>
    Effect.gen(function* () {
      const logs = collectLogs()
      const app = yield* Layer.build(testApp({}, undefined, PublishAlwaysFails).pipe(Layer.provide(logs.layer)))
      yield* Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* signedInMember(base, workspace)
        const stream = yield* openSse(`${base}/api/broadcast`, { cookie })
        expect(stream.status).toBe(200)

        const created = yield* createRecord(client, deal, { title: "Saved anyway" })
        const updated = expectStatus(200)(yield* client.patch(`/api/records/${deal}/${created.id}`, { values: { stage: "open" } })) as RecordBody
        expect(updated.values).toEqual({ title: "Saved anyway", stage: "open" })
        const stored = expectStatus(200)(yield* client.get(`/api/records/${deal}/${created.id}`)) as RecordBody
        expect(stored.values).toEqual({ title: "Saved anyway", stage: "open" })
        const { entries } = yield* timelineOf(client, deal, created.id)
        expect(entries.map((entry) => entry.operation)).toEqual(["updated", "created"])

        // One warning per unit (publishing runs detached from the writer, so wait for it).
        const failures = () => logs.entries.filter((entry) => isPublishFailure(entry, workspace, created.id))
        yield* eventually("two publish failures logged", Effect.sync(() => failures().length === 2))
        expect(failures()[0]?.message).toEqual([expect.stringMatching(/broadcast publish failed$/), "redis: publish refused by the test"])
        expect(yield* stream.events).toEqual([])
      }).pipe(Effect.scoped, Effect.provide(app))
    })
  )

  it.scopedLive("rule 4: with Redis down the stream is 503 at once and health says so; after a restart the subscription comes back by itself", () =>
    Effect.gen(function* () {
      const redis = yield* ownRedis
      const logs = collectLogs()
      const app = yield* Layer.build(
        testApp({ redisUrl: Option.some(Redacted.make(redis.url)) }).pipe(Layer.provide(logs.layer))
      )
      yield* Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* signedInMember(base, workspace)
        expect(yield* redis.subscribers).toBe(1)
        const early = yield* openSse(`${base}/api/broadcast`, { cookie })
        const d1 = yield* createRecord(client, deal, { title: "Before the outage" })
        expect(yield* awaitHint(early, d1.id)).toEqual([changed(deal, d1.id)])

        yield* redis.stop
        // ioredis notices the closed sockets on its own; health reports it.
        yield* eventually("health reports pub/sub down", Effect.map(probe(`${base}/api/health`), (r) => r.status === 503), "5 seconds")
        const health = yield* probe(`${base}/api/health`)
        expect(health.status).toBe(503)
        expect(health.body).toMatchObject({
          _tag: "Unhealthy",
          database: { status: "up", kind: "postgres" },
          pubsub: { status: "down", kind: "redis" }
        })
        const refused = yield* probe(`${base}/api/broadcast`, { cookie })
        expect(refused.status).toBe(503)
        expect(refused.body).toEqual({ _tag: "PubSubUnavailable", message: expect.any(String) })
        expect(refused.millis).toBeLessThan(1_000)

        // Saving still works while Redis is down; its hint is lost (logged), never replayed.
        const d2 = yield* createRecord(client, deal, { title: "During the outage" })
        yield* eventually(
          "the lost publish is logged",
          Effect.sync(() => logs.entries.some((entry) => isPublishFailure(entry, workspace, d2.id)))
        )

        yield* redis.start
        // The instance's one subscriber re-subscribes by itself, and commands answer again.
        yield* eventually("re-subscribed to the broadcast channel", Effect.map(redis.subscribers, (n) => n === 1))
        yield* eventually("health reports pub/sub up", Effect.map(probe(`${base}/api/health`), (r) => r.status === 200))

        const late = yield* openSse(`${base}/api/broadcast`, { cookie })
        expect(late.status).toBe(200)
        const d3 = yield* createRecord(client, deal, { title: "After the restart" })
        expect(yield* awaitHint(late, d3.id)).toEqual([changed(deal, d3.id)])
        // The stream opened before the outage stayed open and receives again; the hint lost meanwhile is not replayed.
        expect(yield* awaitHint(early, d3.id)).toEqual([changed(deal, d1.id), changed(deal, d3.id)])
      }).pipe(Effect.scoped, Effect.provide(app))
    }),
    { timeout: 45_000 }
  )

  it.scopedLive("rule 1 across instances: a save on instance A reaches a stream on instance B through Redis", () =>
    Effect.gen(function* () {
      // Two independent instances: each its own HTTP server, Redis clients, hub and database pool.
      const a = yield* Layer.build(Layer.fresh(testApp()))
      const b = yield* Layer.build(Layer.fresh(testApp()))
      expect(Context.get(a, BroadcastBus)).not.toBe(Context.get(b, BroadcastBus))
      const baseA = yield* Effect.provide(baseUrl, a)
      const baseB = yield* Effect.provide(baseUrl, b)
      expect(baseA).not.toBe(baseB)

      const workspace = yield* Effect.provide(freshWorkspace, a)
      const { client: onA, user, cookie: cookieA } = yield* Effect.provide(signedInMember(baseA, workspace), a)
      // The same user signs in on B (sessions live in the shared database).
      const cookieB = yield* signIn(baseB, { workspace: workspace.slug, email: user.email, password: testPassword })
      const onB = clientFor(baseB, cookieB)

      const streamB = yield* openSse(`${baseB}/api/broadcast`, { cookie: cookieB })
      expect(streamB.status).toBe(200)
      expect(yield* Context.get(b, BroadcastBus).subscriberCount).toBe(1)
      expect(yield* Context.get(a, BroadcastBus).subscriberCount).toBe(0)
      const streamA = yield* openSse(`${baseA}/api/broadcast`, { cookie: cookieA })

      const fromA = yield* createRecord(onA, deal, { title: "Saved on A" })
      expect(yield* awaitHint(streamB, fromA.id)).toEqual([changed(deal, fromA.id)])
      const fromB = yield* createRecord(onB, deal, { title: "Saved on B" })
      expect(yield* awaitHint(streamA, fromB.id)).toEqual([changed(deal, fromA.id), changed(deal, fromB.id)])
      expect(yield* awaitHint(streamB, fromB.id)).toEqual([changed(deal, fromA.id), changed(deal, fromB.id)])
    })
  )
})
