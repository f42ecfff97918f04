import { Effect, Layer, PubSub, Result, Schema } from "effect"
import { PubSubUnavailable } from "../api/errors"
import { RedisConnection } from "../redis/RedisConnection"
import { BroadcastEnvelopeJson } from "./Broadcast"
import { BroadcastBus } from "./BroadcastBus"
import * as BroadcastHub from "./BroadcastHub"
import { makeInbox } from "./BroadcastInbox"
import { makeSubscriptionHealth } from "./BroadcastStatus"
import { StreamRevocationJson } from "./StreamRevocation"
import type { StreamRevocation } from "./StreamRevocation"
import { CacheInvalidationJson } from "./CacheInvalidation"
import type { CacheInvalidation } from "./CacheInvalidation"

/**
 * The deployment's channels: `hints`, the one every instance publishes to and
 * subscribes to, `control`, where stream revocations go, and `caches`, where
 * cache invalidations go (channels of their own, so each channel's messages keep one shape).
 */
export const channelsOf = (prefix: string) => ({
  hints: `${prefix}broadcast`,
  control: `${prefix}broadcast:control`,
  caches: `${prefix}broadcast:caches`
})

const unavailable = (error: unknown) =>
  new PubSubUnavailable({ message: `redis: ${error instanceof Error ? error.message : String(error)}` })

const decode = Schema.decodeUnknownResult(BroadcastEnvelopeJson)
const encode = Schema.encodeEffect(BroadcastEnvelopeJson)
const decodeRevocation = Schema.decodeUnknownResult(StreamRevocationJson)
const encodeRevocation = Schema.encodeEffect(StreamRevocationJson)
const decodeInvalidation = Schema.decodeUnknownResult(CacheInvalidationJson)
const encodeInvalidation = Schema.encodeEffect(CacheInvalidationJson)

const make = Effect.gen(function* () {
  const { command, prefix, subscriber } = yield* RedisConnection
  const { caches: cachesChannel, control: controlChannel, hints: channel } = channelsOf(prefix)
  const hub = yield* BroadcastHub.make()
  const inbox = yield* makeInbox(hub)
  const revocations = yield* Effect.acquireRelease(PubSub.unbounded<StreamRevocation>(), PubSub.shutdown)
  const invalidations = yield* Effect.acquireRelease(PubSub.unbounded<CacheInvalidation>(), PubSub.shutdown)

  const run = Effect.runForkWith(yield* Effect.context<never>())

  // From the ioredis callback straight into the bounded inbox; each stream bounds its own lag.
  const malformed = (error: string) =>
    run(Effect.logWarning("broadcast bus: dropped a malformed message").pipe(Effect.annotateLogs("error", error)))
  const onMessage = (from: string, message: string) => {
    if (from === channel) {
      const decoded = decode(message)
      return Result.isSuccess(decoded) ? inbox.offer(decoded.success) : malformed(decoded.failure.message)
    }
    if (from === cachesChannel) {
      const invalidation = decodeInvalidation(message)
      if (Result.isFailure(invalidation)) return malformed(invalidation.failure.message)
      // Unbounded: never suspends.
      return Effect.runSync(PubSub.publish(invalidations, invalidation.success))
    }
    if (from !== controlChannel) return
    const revocation = decodeRevocation(message)
    if (Result.isFailure(revocation)) return malformed(revocation.failure.message)
    // Unbounded: never suspends.
    Effect.runSync(PubSub.publish(revocations, revocation.success))
  }
  yield* Effect.acquireRelease(
    Effect.sync(() => subscriber.on("message", onMessage)),
    () => Effect.sync(() => subscriber.off("message", onMessage))
  )

  // Subscribed once per instance; ioredis re-subscribes by itself after a reconnect.
  yield* Effect.acquireRelease(
    Effect.tryPromise({ try: () => subscriber.subscribe(channel, controlChannel, cachesChannel), catch: unavailable }),
    () => Effect.tryPromise(() => subscriber.unsubscribe(channel, controlChannel, cachesChannel)).pipe(Effect.ignore)
  )

  // The subscription's outages. Lost when the subscriber's connection closes (again and again while
  // ioredis retries: counted once); restored once SUBSCRIBE is acknowledged on the new connection
  // (ioredis sends its own after "ready"; asking again is harmless and tells us when it holds).
  const health = yield* makeSubscriptionHealth
  const onClose = () => void run(health.lost)
  const onReady = () =>
    void run(
      Effect.tryPromise(() => subscriber.subscribe(channel, controlChannel, cachesChannel)).pipe(
        Effect.andThen(health.restored),
        Effect.ignore
      )
    )
  yield* Effect.acquireRelease(
    Effect.sync(() => subscriber.on("close", onClose).on("ready", onReady)),
    () => Effect.sync(() => subscriber.off("close", onClose).off("ready", onReady))
  )

  const ready = Effect.suspend(() =>
    command.status === "ready" && subscriber.status === "ready"
      ? Effect.void
      : Effect.fail(new PubSubUnavailable({ message: "redis: not connected" }))
  )

  return BroadcastBus.of({
    publish: (envelope) =>
      encode(envelope).pipe(
        Effect.orDie,
        Effect.flatMap((json) => Effect.tryPromise({ try: () => command.publish(channel, json), catch: unavailable })),
        Effect.tapError(() => health.publishFailed),
        Effect.asVoid
      ),
    attach: (workspace, sink, filter) => Effect.andThen(ready, hub.attach(workspace, sink, filter)),
    subscriberCount: hub.subscriberCount,
    // Both connections: a lost subscriber alone would leave streams silent.
    isHealthy: ready.pipe(
      Effect.andThen(Effect.tryPromise(() => command.ping())),
      Effect.timeout("1 second"),
      Effect.as(true),
      Effect.orElseSucceed(() => false)
    ),
    kind: "redis",
    status: health.status,
    resubscriptions: health.resubscriptions,
    revoke: (revocation) =>
      encodeRevocation(revocation).pipe(
        Effect.orDie,
        Effect.flatMap((json) =>
          Effect.tryPromise({ try: () => command.publish(controlChannel, json), catch: unavailable })
        ),
        Effect.asVoid
      ),
    revocations: PubSub.subscribe(revocations),
    invalidate: (invalidation) =>
      encodeInvalidation(invalidation).pipe(
        Effect.orDie,
        Effect.flatMap((json) =>
          Effect.tryPromise({ try: () => command.publish(cachesChannel, json), catch: unavailable })
        ),
        Effect.asVoid
      ),
    invalidations: PubSub.subscribe(invalidations)
  })
})

/** The bus across instances: PUBLISH on the deployment's channel, one SUBSCRIBE per instance. */
export const layer: Layer.Layer<BroadcastBus, PubSubUnavailable, RedisConnection> = Layer.effect(BroadcastBus, make)
