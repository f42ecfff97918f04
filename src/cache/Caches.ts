import { Cache, Context, Duration, Effect, Exit, Hash, Layer, PubSub } from "effect"
import { BroadcastBus } from "../broadcast/BroadcastBus"
import { AppConfig } from "../config/AppConfig"
import type { CacheInvalidation } from "../broadcast/CacheInvalidation"
import { tagsOf } from "./cacheTags"

/** A read-through cache of one lookup, kept coherent with the database by invalidations. */
export interface CoherentCache<K, V> {
  /** The value for `key`: from memory when no change heard of since makes it stale, else read again. */
  readonly get: (key: K) => Effect.Effect<V>
}

export interface CachedLookup<K, V> {
  readonly lookup: (key: K) => Effect.Effect<V>
  /** What the value depends on (`cacheTag`): an invalidation naming one of them makes it stale. */
  readonly tags: (key: K, value: V) => ReadonlyArray<string>
  /** Whether a value is kept (default: all). Absences are not: a later insert would not invalidate them. */
  readonly keep?: (value: V) => boolean
}

export interface CachesShape {
  readonly make: <K, V>(options: CachedLookup<K, V>) => Effect.Effect<CoherentCache<K, V>>
  /**
   * Call after the change has committed, before answering: this instance's
   * caches forget what it made stale at once (a client's next request here
   * reads its own write), the other instances as soon as the bus delivers it.
   * A failed publish is logged, never passed on (the change stands): the
   * other instances then keep the stale entry for `AUTH_CACHE_TTL_MS` at most.
   */
  readonly invalidate: (invalidation: CacheInvalidation) => Effect.Effect<void>
}

interface Entry<V> {
  readonly value: V
  /** The invalidation count when its read began. */
  readonly readFrom: number
  /** The stamp buckets of its tags. */
  readonly buckets: ReadonlyArray<number>
}

/** Tags share stamps by hash: a collision only makes a value be read again. */
const bucketCount = 4096
const bucketOf = (tag: string) => (Hash.string(tag) >>> 0) % bucketCount

/**
 * Coherence by version stamps rather than by deleting entries: Effect's
 * `Cache` stores a lookup's result when it completes, even when the key was
 * invalidated while it ran, so a deletion alone would let a read begun
 * before a change outlive it. Instead every invalidation advances a counter
 * and stamps the buckets of the tags it names; an entry is fresh when no
 * bucket of its tags was stamped after its read began. A stale entry is read
 * again from the database, bypassing the cache, and dropped from it.
 */
const make = Effect.gen(function* () {
  const config = yield* AppConfig
  const bus = yield* BroadcastBus
  const ttl = config.authCacheTtl
  let count = 0
  let clearedAt = 0
  const stamps = new Float64Array(bucketCount)
  const clears: Array<Effect.Effect<void>> = []
  let outagesCleared = (yield* bus.status).outages

  const apply = (invalidation: CacheInvalidation) =>
    Effect.sync(() => {
      for (const tag of tagsOf(invalidation)) stamps[bucketOf(tag)] = ++count
    })

  const fresh = <V>(entry: Entry<V>) =>
    entry.readFrom >= clearedAt && entry.buckets.every((bucket) => (stamps[bucket] ?? 0) <= entry.readFrom)

  const received = yield* bus.invalidations
  yield* Effect.forkScoped(Effect.forever(Effect.flatMap(PubSub.take(received), apply)))
  /**
   * What the bus has delivered and the fiber above has not applied yet: the
   * bus hands a message to its queue at once, so applying those first makes
   * every use see each invalidation the bus had before it (a stream
   * revocation that follows an invalidation never overtakes it).
   */
  const drain = Effect.flatMap(PubSub.takeUpTo(received, Number.POSITIVE_INFINITY), (pending) =>
    Effect.forEach(pending, apply, { discard: true })
  )

  /**
   * Whether the caches may be used: only while the bus subscription is live,
   * since invalidations sent meanwhile are lost to this instance. The first
   * use after a regained subscription forgets everything held before.
   */
  const trusted = Effect.andThen(
    drain,
    Effect.flatMap(bus.status, (status) => {
      if (!status.subscribed) return Effect.succeed(false)
      if (status.outages === outagesCleared) return Effect.succeed(true)
      outagesCleared = status.outages
      clearedAt = ++count
      return Effect.as(Effect.all(clears, { discard: true }), true)
    })
  )

  const makeCache = <K, V>(options: CachedLookup<K, V>) =>
    Effect.gen(function* () {
      if (Duration.toMillis(ttl) === 0) return { get: options.lookup }
      const keep = options.keep ?? (() => true)
      // The lookup runs in a fiber forked from the first caller's, so its SQL spans are that request's children.
      const cache = yield* Cache.makeWith(
        (key: K) =>
          Effect.suspend(() => {
            const readFrom = count
            return Effect.map(
              options.lookup(key),
              (value): Entry<V> => ({ value, readFrom, buckets: options.tags(key, value).map(bucketOf) })
            )
          }),
        {
          capacity: config.authCacheCapacity,
          timeToLive: (exit) => (Exit.isSuccess(exit) && keep(exit.value.value) ? ttl : Duration.zero)
        }
      )
      clears.push(Cache.invalidateAll(cache))
      const cached = (key: K) =>
        Effect.flatMap(Cache.get(cache, key), (entry) =>
          fresh(entry) && keep(entry.value)
            ? Effect.succeed(entry.value)
            : Effect.andThen(
                Cache.invalidate(cache, key),
                fresh(entry) ? Effect.succeed(entry.value) : options.lookup(key)
              )
        )
      return { get: (key: K) => Effect.flatMap(trusted, (trust) => (trust ? cached(key) : options.lookup(key))) }
    })

  return Caches.of({
    make: makeCache,
    invalidate: (invalidation) =>
      Effect.andThen(
        apply(invalidation),
        bus
          .invalidate(invalidation)
          .pipe(
            Effect.catch((error) =>
              Effect.logWarning(
                "cache invalidation publish failed: other instances keep what they hold for AUTH_CACHE_TTL_MS at most",
                error.message
              ).pipe(Effect.annotateLogs({ invalidation: invalidation._tag }))
            )
          )
      )
  })
})

/**
 * This instance's caches of what nearly every request reads (sessions,
 * grants, API keys, workspaces), invalidated over the bus when they change
 * (docs/security.md, "Caches").
 */
export class Caches extends Context.Service<Caches, CachesShape>()("Caches") {
  static readonly layer: Layer.Layer<Caches, never, AppConfig | BroadcastBus> = Layer.effect(Caches, make)
}
