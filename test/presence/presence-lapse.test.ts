import { subscribeQueue } from "../support/hintQueue"
import { randomUUID } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Layer, Queue } from "effect"
import { TestClock } from "effect/testing"
import type { Broadcast } from "../../src/api/Broadcast"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import * as BroadcastBusInProcess from "../../src/broadcast/BroadcastBusInProcess"
import { AppConfig } from "../../src/config/AppConfig"
import { Presence } from "../../src/presence/Presence"
import type { PresenceCaller } from "../../src/presence/Presence"
import { PresenceStore } from "../../src/presence/PresenceStore"
import type { PresenceRecordKey } from "../../src/presence/PresenceStore"
import * as PresenceStoreInProcess from "../../src/presence/PresenceStoreInProcess"
import * as PresenceStoreRedis from "../../src/presence/PresenceStoreRedis"
import { RedisConnection } from "../../src/redis/RedisConnection"
import { testRedisUrl } from "../support/TestApp"

/**
 * The spec's lapse (three missed heartbeats of PRESENCE_HEARTBEAT_MS = 10 s,
 * so 30 s) on the `Presence` service, driven by Effect's TestClock: no test
 * sleeps. `it.effect` runs under the TestClock, which starts at 0 in every
 * test; `Presence` reads that clock and hands `nowMs` to the store.
 */

const deal = "crm/deal"
const alice: PresenceCaller = { userId: "alice", name: "Alice" }

/** AppConfig as the service reads it from an empty environment: every default. */
const defaultConfig = AppConfig.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({}))))

/** `Presence` over the given store, the in-process bus and the default configuration. */
const presenceOver = <A, E, R>(store: Layer.Layer<PresenceStore | A, E, R>) =>
  Presence.layer.pipe(Layer.provideMerge(Layer.mergeAll(store, BroadcastBusInProcess.layer, defaultConfig)))

const presenceHint = (businessObjectId: string) => ({
  type: "presence",
  data: { businessObject: deal, businessObjectId }
})

/** Everything the workspace's subscription holds right now, emptied. */
const received = (hints: Queue.Dequeue<Broadcast>) =>
  Effect.map(Queue.clear(hints), (all) => all.map(({ type, data }) => ({ type, data: { ...data } })))

/** The scenarios, against the `Presence` service in context; each gets its own workspace id. */
const scenarios = {
  /** heartbeat at 0; listed at 29.999 s; gone at 30 s, silently; a heartbeat then is an arrival again. */
  lapse: (workspace: string) =>
    Effect.gen(function* () {
      const presence = yield* Presence
      const config = yield* AppConfig
      expect(Duration.toMillis(config.presenceHeartbeat)).toBe(10_000)
      const hints = yield* subscribeQueue(yield* BroadcastBus, workspace)
      const r1: PresenceRecordKey = { workspace, businessObject: deal, recordId: "r1" }
      const editors = Effect.map(presence.list(workspace, deal), ({ records }) =>
        Object.fromEntries(
          Object.entries(records).map(([id, list]) => [id, list.map(({ id, name }) => ({ id, name }))])
        )
      )
      const listed = { r1: [{ id: "e1", name: "Alice" }] }

      expect(yield* presence.heartbeat(r1, "e1", alice)).toBe("arrived")
      expect(yield* received(hints)).toEqual([presenceHint("r1")])

      yield* TestClock.adjust(Duration.millis(29_999))
      expect(yield* editors).toEqual(listed)

      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* editors).toEqual({})
      // The lapse was not announced.
      expect(yield* received(hints)).toEqual([])
      // Lapsed is absent: leaving changes and announces nothing.
      expect(yield* presence.leave(r1, "e1", alice)).toBe("absent")
      expect(yield* received(hints)).toEqual([])

      // A heartbeat after the lapse is an arrival again, and announced.
      expect(yield* presence.heartbeat(r1, "e1", alice)).toBe("arrived")
      expect(yield* received(hints)).toEqual([presenceHint("r1")])
      expect(yield* editors).toEqual(listed)
      yield* TestClock.adjust(Duration.seconds(30))
      expect(yield* editors).toEqual({})
      expect(yield* received(hints)).toEqual([])
    }),

  /** heartbeat at 0 and at 20 s (silent renewal); listed until 49.999 s, gone at 50 s. */
  renewal: (workspace: string) =>
    Effect.gen(function* () {
      const presence = yield* Presence
      const hints = yield* subscribeQueue(yield* BroadcastBus, workspace)
      const r1: PresenceRecordKey = { workspace, businessObject: deal, recordId: "r1" }
      const listedIds = Effect.map(presence.list(workspace, deal), ({ records }) =>
        Object.values(records).flatMap((list) => list.map((editor) => editor.id))
      )

      expect(yield* presence.heartbeat(r1, "e1", alice)).toBe("arrived")
      expect(yield* received(hints)).toEqual([presenceHint("r1")])
      yield* TestClock.adjust(Duration.seconds(20))
      expect(yield* presence.heartbeat(r1, "e1", alice)).toBe("renewed")
      expect(yield* received(hints)).toEqual([])

      // Past the first lapse time (30 s): the renewal holds it.
      yield* TestClock.adjust(Duration.seconds(10))
      expect(yield* listedIds).toEqual(["e1"])
      yield* TestClock.adjust(Duration.millis(19_999))
      expect(yield* listedIds).toEqual(["e1"])
      yield* TestClock.adjust(Duration.millis(1))
      expect(yield* listedIds).toEqual([])
      expect(yield* received(hints)).toEqual([])
    }),

  /** Heartbeats at 10 s intervals keep an editor forever; only its departure is announced. */
  steady: (workspace: string) =>
    Effect.gen(function* () {
      const presence = yield* Presence
      const hints = yield* subscribeQueue(yield* BroadcastBus, workspace)
      const r1: PresenceRecordKey = { workspace, businessObject: deal, recordId: "r1" }
      const outcomes: Array<string> = []
      for (let beat = 0; beat < 10; beat++) {
        outcomes.push(yield* presence.heartbeat(r1, "e1", alice))
        yield* TestClock.adjust(Duration.seconds(10))
        expect(Object.keys((yield* presence.list(workspace, deal)).records)).toEqual(["r1"])
      }
      expect(outcomes).toEqual(["arrived", ...Array.from({ length: 9 }, () => "renewed")])
      expect(yield* received(hints)).toEqual([presenceHint("r1")])
      expect(yield* presence.leave(r1, "e1", alice)).toBe("left")
      expect(yield* received(hints)).toEqual([presenceHint("r1")])
    })
}

type Scenario = keyof typeof scenarios
const names: ReadonlyArray<Scenario> = ["lapse", "renewal", "steady"]
const titles: Record<Scenario, string> = {
  lapse: "listed at 29.999 s, gone at 30 s without a broadcast; a heartbeat after the lapse arrives again",
  renewal: "a heartbeat at 20 s renews silently: listed at 49.999 s, gone at 50 s",
  steady: "heartbeats every 10 s keep the editor; one arrival, one departure broadcast"
}

describe("presence lapse under TestClock (in-process store)", () => {
  for (const name of names) {
    it.effect(titles[name], () =>
      Effect.scoped(scenarios[name](`test-${randomUUID()}`)).pipe(
        Effect.provide(presenceOver(PresenceStoreInProcess.layer))
      )
    )
  }
})

/**
 * The same scenarios on the real Redis store. The store takes `nowMs` from
 * `Presence` (the TestClock) and compares it with the lapse times it holds,
 * so TestClock drives it too. The Redis connection is built inside the
 * test, under the TestClock: connecting waits for ioredis' `ready` event,
 * not for a timer, so it does not hang (its 5 s ready timeout would simply
 * never fire). The keys of each test's workspace are deleted afterwards.
 */
describe("presence lapse under TestClock (redis store)", () => {
  const redisStore = PresenceStoreRedis.layer.pipe(Layer.provideMerge(RedisConnection.layer(testRedisUrl)))

  const deleteKeys = (workspace: string) =>
    Effect.flatMap(RedisConnection, ({ command, prefix }) =>
      Effect.promise(() => command.del(...Object.values(PresenceStoreRedis.presenceKeys(prefix, workspace, deal))))
    )

  for (const name of names) {
    it.effect(titles[name], () => {
      const workspace = `test-${randomUUID()}`
      const onRedis = Effect.flatMap(PresenceStore, (store) => Effect.sync(() => expect(store.kind).toBe("redis")))
      return Effect.andThen(onRedis, Effect.scoped(scenarios[name](workspace))).pipe(
        Effect.ensuring(deleteKeys(workspace)),
        Effect.provide(presenceOver(redisStore))
      )
    })
  }
})
