import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option, Redacted } from "effect"
import type { LoginThrottleStore } from "../../src/auth/LoginThrottleStore"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { PubSubUnavailable } from "../../src/api/errors"
import type { PresenceStore } from "../../src/presence/PresenceStore"
import { PubSubLive } from "../../src/app/PubSubLive"
import { baseUrl, freshWorkspace, testApp, testPassword } from "../support/TestApp"
import { clientFor, createRecord, recordsOf, signedInMember, timelineOf } from "../support/api"
import { signIn } from "../support/http"
import { openSse } from "../support/sse"
import { collectLogs, ownRedis } from "../support/ownRedis"
import type { Logged } from "../support/ownRedis"
import { awaitHint, changed, eventually, isResubscribed, opened, probe, resubscribed } from "./streamHelpers"

const deal = "crm/deal"

// ---------------------------------------------------------------------------
// Logs

/**
 * The warning of a failed publish about one record. The workspace may be
 * named by its id or its slug (the spec only asks that it be named).
 */
const isPublishFailure = (
  entry: Logged,
  workspace: { readonly id: string; readonly slug: string },
  businessObjectId: string
) =>
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

describe("broadcast when the shared pub/sub store misbehaves", () => {
  it.live(
    "rule 3: the local save never depends on the publish; a failed publish is logged with the workspace and the object",
    () =>
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
          const deals = recordsOf(client, deal)
          const updated = (yield* deals.update(created.id, { stage: "open" })).body
          expect(updated.values).toEqual({ title: "Saved anyway", stage: "open" })
          const stored = (yield* deals.get(created.id)).body
          expect(stored.values).toEqual({ title: "Saved anyway", stage: "open" })
          const { entries } = yield* timelineOf(client, deal, created.id)
          expect(entries.map((entry) => entry.operation)).toEqual(["updated", "created"])

          // One warning per unit (publishing runs detached from the writer, so wait for it).
          const failures = () => logs.entries.filter((entry) => isPublishFailure(entry, workspace, created.id))
          yield* eventually(
            "two publish failures logged",
            Effect.sync(() => failures().length === 2)
          )
          expect(failures()[0]?.message).toEqual([
            expect.stringMatching(/broadcast publish failed$/),
            "redis: publish refused by the test"
          ])
          expect(yield* stream.events).toEqual([opened])
        }).pipe(Effect.scoped, Effect.provide(app))
      })
  )

  it.live(
    "rule 4: with Redis down the stream is 503 at once and health says so; after a restart the subscription comes back by itself",
    () =>
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
          expect(yield* awaitHint(early, d1.id)).toEqual([opened, changed(deal, d1.id)])

          yield* redis.stop
          // ioredis notices the closed sockets on its own; health reports it.
          yield* eventually(
            "health reports pub/sub down",
            Effect.map(probe(`${base}/api/health`), (r) => r.status === 503),
            "5 seconds"
          )
          const health = yield* probe(`${base}/api/health`)
          expect(health.status).toBe(503)
          expect(health.body).toMatchObject({
            _tag: "Unhealthy",
            database: { status: "up", kind: "postgres" },
            pubsub: { status: "down", kind: "redis" }
          })
          const refused = yield* probe(`${base}/api/broadcast`, { cookie })
          expect(refused.status).toBe(503)
          expect(refused.body).toEqual({
            _tag: "PubSubUnavailable",
            message: expect.any(String),
            requestId: expect.any(String)
          })
          expect(refused.millis).toBeLessThan(1_000)

          // Saving still works while Redis is down; its hint is lost (logged), never replayed.
          const d2 = yield* createRecord(client, deal, { title: "During the outage" })
          yield* eventually(
            "the lost publish is logged",
            Effect.sync(() => logs.entries.some((entry) => isPublishFailure(entry, workspace, d2.id)))
          )

          yield* redis.start
          // The instance's one subscriber re-subscribes by itself, and commands answer again.
          yield* eventually(
            "re-subscribed to the broadcast channel",
            Effect.map(redis.subscribers, (n) => n === 1)
          )
          yield* eventually(
            "health reports pub/sub up",
            Effect.map(probe(`${base}/api/health`), (r) => r.status === 200)
          )

          // The stream opened before the outage is told to re-read what it shows.
          yield* early.waitFor((events) => events.some(isResubscribed))

          const late = yield* openSse(`${base}/api/broadcast`, { cookie })
          expect(late.status).toBe(200)
          const d3 = yield* createRecord(client, deal, { title: "After the restart" })
          expect(yield* awaitHint(late, d3.id)).toEqual([opened, changed(deal, d3.id)])
          // The stream opened before the outage stayed open and receives again; the hint lost meanwhile is not replayed.
          expect(yield* awaitHint(early, d3.id)).toEqual([
            opened,
            changed(deal, d1.id),
            resubscribed,
            changed(deal, d3.id)
          ])
        }).pipe(Effect.scoped, Effect.provide(app))
      }),
    { timeout: 45_000 }
  )

  it.live("rule 1 across instances: a save on instance A reaches a stream on instance B through Redis", () =>
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
      expect(yield* awaitHint(streamB, fromA.id)).toEqual([opened, changed(deal, fromA.id)])
      const fromB = yield* createRecord(onB, deal, { title: "Saved on B" })
      expect(yield* awaitHint(streamA, fromB.id)).toEqual([opened, changed(deal, fromA.id), changed(deal, fromB.id)])
      expect(yield* awaitHint(streamB, fromB.id)).toEqual([opened, changed(deal, fromA.id), changed(deal, fromB.id)])
    })
  )
})
