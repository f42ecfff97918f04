import { expect, layer } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { Readiness } from "../../src/health/Readiness"
import type { LoginThrottleStore } from "../../src/auth/LoginThrottleStore"
import type { PresenceStore } from "../../src/presence/PresenceStore"
import { PubSubLive } from "../../src/app/PubSubLive"
import { baseUrl, testApp } from "../support/TestApp"
import { healthOf } from "../support/api"
import { bodyAsSent } from "../support/apiCaller"

layer(testApp(), { excludeTestServices: true })("liveness and readiness", (it) => {
  it.effect("live is 200 while the process runs; ready is 200 with every component up", () =>
    Effect.gen(function* () {
      const routes = healthOf(yield* baseUrl)
      const live = yield* routes.live
      expect(live.status).toBe(200)
      expect(bodyAsSent(live)).toEqual({ status: "live" })
      const ready = yield* routes.ready
      expect(ready.status).toBe(200)
      expect(bodyAsSent(ready)).toEqual({
        status: "ready",
        draining: false,
        database: { status: "up", kind: "postgres" },
        pubsub: { status: "up", kind: "redis" },
        broadcast: subscribed,
        // The machine's PostgreSQL has no logical decoding: the feed takes positions under the lock (docs/feed.md).
        feed: { mode: "lock", slot: null, holder: false, slotLagBytes: null, unpositionedRows: null, delayMs: null }
      })
      // The original route keeps its shape, and shows the broadcast subscription too.
      const health = yield* routes.health
      expect(health.status).toBe(200)
      expect(bodyAsSent(health)).toEqual({
        database: { status: "up", kind: "postgres" },
        pubsub: { status: "up", kind: "redis" },
        broadcast: subscribed,
        feed: { mode: "lock", slot: null, holder: false, slotLagBytes: null, unpositionedRows: null, delayMs: null }
      })
    })
  )

  // Last in this block: the instance stays draining.
  it.effect("once draining, ready is 503 (live stays 200)", () =>
    Effect.gen(function* () {
      const routes = healthOf(yield* baseUrl)
      yield* (yield* Readiness).startDraining
      const ready = yield* routes.ready
      expect(ready.status).toBe(503)
      expect(bodyAsSent(ready)).toMatchObject({ _tag: "NotReady", draining: true, database: { status: "up" } })
      expect((yield* routes.live).status).toBe(200)
    })
  )
})

/** The broadcast subscription of an instance that never lost Redis. */
const subscribed = { subscribed: true, lostSince: null, outages: 0, lastOutageMs: null, droppedPublishes: 0 }

/** The in-process bus, reporting itself down as an unreachable Redis would. */
const PubSubDown = Layer.effectContext(
  Effect.gen(function* () {
    const context = yield* Effect.context<BroadcastBus | PresenceStore | LoginThrottleStore>()
    return Context.add(
      context,
      BroadcastBus,
      BroadcastBus.of({ ...Context.get(context, BroadcastBus), isHealthy: Effect.succeed(false) })
    )
  })
).pipe(Layer.provide(PubSubLive))

layer(testApp({ redisUrl: Option.none() }, undefined, PubSubDown), { excludeTestServices: true })(
  "readiness with pub/sub down",
  (it) => {
    it.effect("is still 200, reported as degraded: writes and reads still work", () =>
      Effect.gen(function* () {
        const ready = yield* healthOf(yield* baseUrl).ready
        expect(ready.status).toBe(200)
        expect(bodyAsSent(ready)).toMatchObject({
          status: "degraded",
          draining: false,
          database: { status: "up" },
          pubsub: { status: "down" }
        })
      })
    )
  }
)
