import { subscribeQueue } from "../support/hintQueue"
import { randomUUID } from "node:crypto"
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Exit, Layer, Queue, Scope } from "effect"
import type { RedisClient } from "../../src/redis/clientLifecycle"
import { BroadcastEnvelope } from "../../src/broadcast/Broadcast"
import type { Broadcast } from "../../src/api/Broadcast"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import * as BroadcastBusInProcess from "../../src/broadcast/BroadcastBusInProcess"
import * as BroadcastBusRedis from "../../src/broadcast/BroadcastBusRedis"
import * as BroadcastHub from "../../src/broadcast/BroadcastHub"
import { RedisConnection } from "../../src/redis/RedisConnection"

const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
const freshWorkspace = () => `test-${randomUUID()}`

const hint = (workspace: string, businessObjectId: string, type: "changed" | "presence" = "changed") =>
  new BroadcastEnvelope({ workspace, type, data: { businessObject: "crm/deal", businessObjectId } })

/** Waits for the next hint; a missing one fails the test instead of hanging it. */
const next = (queue: Queue.Dequeue<Broadcast>) =>
  Queue.take(queue).pipe(
    Effect.timeoutOrElse({ duration: "5 seconds", orElse: () => Effect.fail(new Error("no hint arrived")) })
  )

const busSuite = (name: string, bus: Layer.Layer<BroadcastBus, unknown>) =>
  layer(bus, { excludeTestServices: true })(name, (it) => {
    it.effect("a stream receives its own workspace's hints only", () =>
      Effect.gen(function* () {
        const bus = yield* BroadcastBus
        const a = freshWorkspace()
        const b = freshWorkspace()
        const fromA = yield* subscribeQueue(bus, a)
        const fromB = yield* subscribeQueue(bus, b)
        // B's hint goes first: had it leaked into A's stream, A would see it first.
        yield* bus.publish(hint(b, "b1"))
        yield* bus.publish(hint(a, "a1", "presence"))
        const gotA = yield* next(fromA)
        expect(gotA.type).toBe("presence")
        expect(gotA.data.businessObjectId).toBe("a1")
        expect((yield* next(fromB)).data.businessObjectId).toBe("b1")
        yield* bus.publish(hint(a, "a2"))
        expect((yield* next(fromA)).data.businessObjectId).toBe("a2")
        expect(yield* Queue.size(fromB)).toBe(0)
      })
    )

    it.effect("closing the scopes releases every subscription", () =>
      Effect.gen(function* () {
        const bus = yield* BroadcastBus
        const scope = yield* Scope.make()
        const workspaces = [freshWorkspace(), freshWorkspace()]
        for (let i = 0; i < 50; i++) {
          yield* subscribeQueue(bus, workspaces[i % 2] ?? "").pipe(Scope.provide(scope))
        }
        expect(yield* bus.subscriberCount).toBe(50)
        yield* Scope.close(scope, Exit.void)
        expect(yield* bus.subscriberCount).toBe(0)
      })
    )

    it.effect("a stream that never reads blocks neither the publisher nor another stream", () =>
      Effect.gen(function* () {
        const bus = yield* BroadcastBus
        const ws = freshWorkspace()
        const stalled = yield* subscribeQueue(bus, ws)
        const reader = yield* subscribeQueue(bus, ws)
        const total = BroadcastHub.defaultCapacity + 100
        for (let i = 0; i < total; i++) yield* bus.publish(hint(ws, String(i)))
        const last = String(total - 1)
        let got = yield* next(reader)
        while (got.data.businessObjectId !== last) got = yield* next(reader)
        // The stalled stream kept only the newest hints, up to its buffer.
        expect(yield* Queue.size(stalled)).toBe(BroadcastHub.defaultCapacity)
        const all = yield* Queue.takeAll(stalled)
        expect([...all].at(-1)?.data.businessObjectId).toBe(last)
      })
    )
  })

describe("BroadcastHub", () => {
  it.effect("keeps a workspace's hub only while it has subscribers", () =>
    Effect.gen(function* () {
      const hub = yield* BroadcastHub.make()
      const [a, b] = [freshWorkspace(), freshWorkspace()]
      const first = yield* Scope.make()
      const second = yield* Scope.make()
      yield* subscribeQueue(hub, a).pipe(Scope.provide(first))
      yield* subscribeQueue(hub, a).pipe(Scope.provide(second))
      yield* subscribeQueue(hub, b).pipe(Scope.provide(second))
      expect([yield* hub.workspaceCount, yield* hub.subscriberCount]).toEqual([2, 3])
      yield* Scope.close(second, Exit.void)
      expect([yield* hub.workspaceCount, yield* hub.subscriberCount]).toEqual([1, 1])
      yield* Scope.close(first, Exit.void)
      expect([yield* hub.workspaceCount, yield* hub.subscriberCount]).toEqual([0, 0])
      // Nobody listening: delivering is a no-op.
      yield* hub.deliver(hint(a, "r1"))
    })
  )
})

busSuite("BroadcastBus (in-process)", BroadcastBusInProcess.layer)

const redisBus = () => BroadcastBusRedis.layer.pipe(Layer.provideMerge(RedisConnection.layer(redisUrl)))

busSuite("BroadcastBus (redis)", redisBus())

/** Drops a client's connection for good and waits until ioredis reports it. */
const closed = (client: RedisClient) =>
  Effect.callback<void>((resume) => {
    client.once("end", () => resume(Effect.void))
    client.disconnect()
  })

describe("BroadcastBus (redis) across instances", () => {
  /** One API instance: its own connections, subscription and hub. */
  const instance = Effect.map(Layer.build(redisBus()), (context) => ({
    bus: Context.get(context, BroadcastBus),
    redis: Context.get(context, RedisConnection)
  }))

  it.live("a hint published on one instance reaches the streams of every instance", () =>
    Effect.gen(function* () {
      const one = yield* instance
      const two = yield* instance
      const ws = freshWorkspace()
      const onOne = yield* subscribeQueue(one.bus, ws)
      const onTwo = yield* subscribeQueue(two.bus, ws)
      yield* one.bus.publish(hint(ws, "r1"))
      expect((yield* next(onTwo)).data.businessObjectId).toBe("r1")
      expect((yield* next(onOne)).data.businessObjectId).toBe("r1")
    })
  )

  it.live("a malformed message is dropped and delivery goes on", () =>
    Effect.gen(function* () {
      const { bus, redis } = yield* instance
      const ws = freshWorkspace()
      const stream = yield* subscribeQueue(bus, ws)
      yield* Effect.promise(() => redis.command.publish(BroadcastBusRedis.channelsOf(redis.prefix).hints, "not json"))
      yield* Effect.promise(() =>
        redis.command.publish(
          BroadcastBusRedis.channelsOf(redis.prefix).hints,
          JSON.stringify({ workspace: ws, type: "nope", data: {} })
        )
      )
      yield* bus.publish(hint(ws, "r1"))
      expect((yield* next(stream)).data.businessObjectId).toBe("r1")
    })
  )

  it.live("with Redis gone, publish and subscribe fail fast with PubSubUnavailable", () =>
    Effect.gen(function* () {
      const { bus, redis } = yield* instance
      expect(yield* bus.isHealthy).toBe(true)
      yield* Effect.all([closed(redis.command), closed(redis.subscriber)], { concurrency: 2 })
      const published = yield* Effect.flip(bus.publish(hint(freshWorkspace(), "r1")))
      expect(published._tag).toBe("PubSubUnavailable")
      const subscribed = yield* Effect.flip(subscribeQueue(bus, freshWorkspace()))
      expect(subscribed._tag).toBe("PubSubUnavailable")
      expect(yield* bus.isHealthy).toBe(false)
      expect(yield* bus.subscriberCount).toBe(0)
    })
  )

  it.live("building the layer against an unreachable Redis fails after a bounded wait", () =>
    Effect.gen(function* () {
      const failure = yield* Layer.build(
        BroadcastBusRedis.layer.pipe(
          Layer.provide(RedisConnection.layer("redis://127.0.0.1:1", { readyTimeout: "300 millis" }))
        )
      ).pipe(Effect.scoped, Effect.flip)
      expect(failure._tag).toBe("PubSubUnavailable")
      expect(failure.message).toContain("not ready")
    })
  )
})
