import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Option, Ref } from "effect"
import type { BroadcastStatus } from "../../src/api/BroadcastStatus"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import * as BroadcastBusInProcess from "../../src/broadcast/BroadcastBusInProcess"
import { inProcessStatus } from "../../src/broadcast/BroadcastStatus"
import { Caches } from "../../src/cache/Caches"
import { cacheTag } from "../../src/cache/cacheTags"
import { AppConfig } from "../../src/config/AppConfig"

/** The caches over the in-process bus, whose subscription status the test sets. */
const cachesWith = (status: Ref.Ref<BroadcastStatus>) =>
  Caches.layer.pipe(
    Layer.provideMerge(
      Layer.effect(
        BroadcastBus,
        Effect.map(BroadcastBus, (bus) => BroadcastBus.of({ ...bus, status: Ref.get(status) }))
      ).pipe(Layer.provide(BroadcastBusInProcess.layer))
    ),
    Layer.provide(AppConfig.make())
  )

/** A "database" of one value per key, counting its reads. */
const store = Effect.gen(function* () {
  const value = yield* Ref.make(1)
  const reads = yield* Ref.make(0)
  const caches = yield* Caches
  const cache = yield* caches.make({
    lookup: (_: string) =>
      Effect.andThen(
        Ref.update(reads, (n) => n + 1),
        Ref.get(value)
      ),
    tags: (key) => [cacheTag.session(key)]
  })
  return { value, reads: Ref.get(reads), cache, caches }
})

const withCaches = <A, E>(body: (status: Ref.Ref<BroadcastStatus>) => Effect.Effect<A, E, Caches | BroadcastBus>) =>
  Effect.gen(function* () {
    const status = yield* Ref.make(inProcessStatus)
    return yield* body(status).pipe(Effect.provide(cachesWith(status)))
  }).pipe(Effect.scoped)

describe("Caches", () => {
  it.effect("a value is read once, served from memory, and read again after an invalidation naming its tag", () =>
    withCaches(() =>
      Effect.gen(function* () {
        const { cache, caches, reads, value } = yield* store
        expect(yield* cache.get("k")).toBe(1)
        expect(yield* cache.get("k")).toBe(1)
        expect(yield* reads).toBe(1)

        yield* Ref.set(value, 2)
        yield* caches.invalidate({ _tag: "Session", tokenHash: "other" })
        expect(yield* cache.get("k")).toBe(1)
        yield* caches.invalidate({ _tag: "Session", tokenHash: "k" })
        expect(yield* cache.get("k")).toBe(2)
        expect(yield* cache.get("k")).toBe(2)
        expect(yield* reads).toBe(3)
      })
    )
  )

  it.effect("a read that began before an invalidation is not served after it (it completes into the cache)", () =>
    withCaches(() =>
      Effect.gen(function* () {
        const caches = yield* Caches
        const started = yield* Deferred.make<void>()
        const gate = yield* Deferred.make<void>()
        const value = yield* Ref.make("before")
        const cache = yield* caches.make({
          lookup: (_: string) =>
            Effect.gen(function* () {
              const read = yield* Ref.get(value)
              yield* Deferred.succeed(started, undefined)
              yield* Deferred.await(gate)
              return read
            }),
          tags: (key) => [cacheTag.session(key)]
        })
        const early = yield* Effect.forkChild(cache.get("k"))
        yield* Deferred.await(started)
        // The change commits and is invalidated while that read is still on its way.
        yield* Ref.set(value, "after")
        yield* caches.invalidate({ _tag: "Session", tokenHash: "k" })
        yield* Deferred.succeed(gate, undefined)
        // The early request overlapped the change: either answer is right for it.
        expect(["before", "after"]).toContain(yield* Fiber.join(early))
        // Every request begun after the invalidation sees the change.
        expect(yield* cache.get("k")).toBe("after")
        expect(yield* cache.get("k")).toBe("after")
      })
    )
  )

  it.effect("values `keep` refuses (an absent session) are read every time", () =>
    withCaches(() =>
      Effect.gen(function* () {
        const caches = yield* Caches
        const reads = yield* Ref.make(0)
        const cache = yield* caches.make({
          lookup: (_: string) =>
            Effect.as(
              Ref.update(reads, (n) => n + 1),
              Option.none<number>()
            ),
          tags: () => [],
          keep: Option.isSome
        })
        yield* cache.get("k")
        yield* cache.get("k")
        expect(yield* Ref.get(reads)).toBe(2)
      })
    )
  )

  it.effect("while the subscription is lost the cache is bypassed; once regained it starts empty", () =>
    withCaches((status) =>
      Effect.gen(function* () {
        const { cache, reads, value } = yield* store
        expect(yield* cache.get("k")).toBe(1)
        yield* Ref.set(status, { ...inProcessStatus, subscribed: false, outages: 1, lostSince: "now" })
        // Changed meanwhile; the invalidation would have been lost.
        yield* Ref.set(value, 2)
        expect(yield* cache.get("k")).toBe(2)
        expect(yield* cache.get("k")).toBe(2)
        expect(yield* reads).toBe(3)

        yield* Ref.set(value, 3)
        yield* Ref.set(status, { ...inProcessStatus, outages: 1, lastOutageMs: 5 })
        expect(yield* cache.get("k")).toBe(3)
        expect(yield* cache.get("k")).toBe(3)
        expect(yield* reads).toBe(4)
      })
    )
  )

  it.effect(
    "an invalidation from another instance is applied before the next use, as soon as the bus has delivered it",
    () =>
      withCaches(() =>
        Effect.gen(function* () {
          const { cache, reads, value } = yield* store
          const bus = yield* BroadcastBus
          expect(yield* cache.get("k")).toBe(1)
          yield* Ref.set(value, 2)
          // Delivered as another instance's message is: into the bus's queue, before the cache's own fiber has run.
          yield* bus.invalidate({ _tag: "Session", tokenHash: "k" })
          expect(yield* cache.get("k")).toBe(2)
          expect(yield* reads).toBe(2)
        })
      )
  )
})
