import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Logger, Option, PubSub, Redacted, References } from "effect"
import { appLayer } from "../../src/app/AppLayer"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { baseUrl, freshWorkspace, testConfig } from "../support/TestApp"
import { createRecord, signedInMember } from "../support/api"
import { collectLogs, ownRedis } from "../support/ownRedis"
import type { Logged } from "../support/ownRedis"
import { openSse } from "../support/sse"
import { awaitHint, changed, eventually, hintId, isResubscribed, opened, probe, resubscribed } from "./streamHelpers"

const deal = "crm/deal"

const logged = (entries: ReadonlyArray<Logged>, level: string, message: string) =>
  entries.filter(
    (entry) => entry.level === level && typeof entry.message[0] === "string" && entry.message[0].startsWith(message)
  )

describe("Redis outage accounting", () => {
  it.live(
    "the instance knows when its subscription was lost and restored, counts the hints it could not publish, says so in /api/health, signals the resubscription once and tells the open stream to resync",
    () =>
      Effect.gen(function* () {
        const redis = yield* ownRedis
        const logs = collectLogs()
        // Info lines too (the restoration is one), kept instead of printed.
        const logging = Layer.merge(Logger.layer([logs.logger]), Layer.succeed(References.MinimumLogLevel, "Info"))
        const app = yield* Layer.build(
          appLayer(testConfig({ redisUrl: Option.some(Redacted.make(redis.url)) })).pipe(Layer.provide(logging))
        )
        yield* Effect.gen(function* () {
          const base = yield* baseUrl
          const bus = yield* BroadcastBus
          const signals = yield* bus.resubscriptions
          const workspace = yield* freshWorkspace
          const { client, cookie } = yield* signedInMember(base, workspace)
          const stream = yield* openSse(`${base}/api/broadcast`, { cookie })
          expect(yield* bus.status).toEqual({
            subscribed: true,
            lostSince: null,
            outages: 0,
            lastOutageMs: null,
            droppedPublishes: 0
          })

          yield* redis.stop
          yield* eventually(
            "the subscription is known lost",
            Effect.map(bus.status, (status) => !status.subscribed),
            "5 seconds"
          )
          expect(logged(logs.entries, "WARN", "broadcast subscription lost")).toHaveLength(1)

          // Saves go on; their hints cannot be published and are counted.
          const lost = [
            yield* createRecord(client, deal, { title: "During 1" }),
            yield* createRecord(client, deal, { title: "During 2" })
          ]
          yield* eventually(
            "two dropped publishes",
            Effect.map(bus.status, (status) => status.droppedPublishes === 2)
          )
          const health = yield* probe(`${base}/api/health`)
          expect(health.status).toBe(503)
          expect(health.body).toMatchObject({
            pubsub: { status: "down", kind: "redis" },
            broadcast: {
              subscribed: false,
              lostSince: expect.any(String),
              outages: 1,
              lastOutageMs: null,
              droppedPublishes: 2
            }
          })
          expect(yield* PubSub.remaining(signals)).toBe(0)

          yield* redis.start
          const signal = yield* PubSub.take(signals).pipe(Effect.timeout("15 seconds"))
          expect(signal).toEqual({ outageMs: expect.any(Number), droppedPublishes: 2 })
          expect(signal.outageMs).toBeGreaterThan(0)
          const status = yield* bus.status
          expect(status).toEqual({
            subscribed: true,
            lostSince: null,
            outages: 1,
            lastOutageMs: signal.outageMs,
            droppedPublishes: 2
          })
          const restoredLogs = logged(logs.entries, "INFO", "broadcast subscription restored")
          expect(restoredLogs).toHaveLength(1)
          expect(restoredLogs[0]?.annotations).toMatchObject({ outageMs: signal.outageMs, droppedPublishes: 2 })

          // The stream opened before the outage is told to re-read, once; the lost hints are not replayed.
          yield* stream.waitFor((events) => events.some(isResubscribed))
          const after = yield* createRecord(client, deal, { title: "After" })
          const events = yield* awaitHint(stream, after.id)
          expect(events).toEqual([opened, resubscribed, changed(deal, after.id)])
          expect(events.map(hintId)).not.toContain(lost[0]?.id)
          yield* eventually(
            "health is up again",
            Effect.map(probe(`${base}/api/health`), (r) => r.status === 200)
          )
          // Exactly one resubscription for one outage.
          expect(yield* PubSub.remaining(signals)).toBe(0)
          expect(logged(logs.entries, "WARN", "broadcast subscription lost")).toHaveLength(1)
        }).pipe(Effect.scoped, Effect.provide(app))
      }),
    { timeout: 60_000 }
  )
})
