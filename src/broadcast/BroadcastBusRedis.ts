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
import { subscribeCluster } from "./clusterSubscription"
import type { Deliver } from "./hintTransport"
import { subscribeSingle } from "./singleSubscription"

/**
 * The deployment's channels: `hints`, the one every instance publishes to and
 * subscribes to (on one server; a cluster has `hintPartitions` instead), `control`, where stream revocations go, and `caches`, where
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
  const redis = yield* RedisConnection
  const { command, prefix } = redis
  const { caches: cachesChannel, control: controlChannel } = channelsOf(prefix)
  const hub = yield* BroadcastHub.make()
  const inbox = yield* makeInbox(hub)
  const revocations = yield* Effect.acquireRelease(PubSub.unbounded<StreamRevocation>(), PubSub.shutdown)
  const invalidations = yield* Effect.acquireRelease(PubSub.unbounded<CacheInvalidation>(), PubSub.shutdown)

  const run = Effect.runForkWith(yield* Effect.context<never>())

  // From the ioredis callback straight into the bounded inbox; each stream bounds its own lag.
  const malformed = (error: string) =>
    run(Effect.logWarning("broadcast bus: dropped a malformed message").pipe(Effect.annotateLogs("error", error)))
  const deliver: Deliver = (carried, message) => {
    if (carried === "hints") {
      const decoded = decode(message)
      return Result.isSuccess(decoded) ? inbox.offer(decoded.success) : malformed(decoded.failure.message)
    }
    if (carried === "caches") {
      const invalidation = decodeInvalidation(message)
      if (Result.isFailure(invalidation)) return malformed(invalidation.failure.message)
      // Unbounded: never suspends.
      return Effect.runSync(PubSub.publish(invalidations, invalidation.success))
    }
    const revocation = decodeRevocation(message)
    if (Result.isFailure(revocation)) return malformed(revocation.failure.message)
    // Unbounded: never suspends.
    Effect.runSync(PubSub.publish(revocations, revocation.success))
  }

  const health = yield* makeSubscriptionHealth
  const transport =
    redis.kind === "single"
      ? yield* subscribeSingle(redis, channelsOf(prefix), health, deliver)
      : yield* subscribeCluster(redis, { control: controlChannel, caches: cachesChannel }, health, deliver)

  const ready = Effect.suspend(() =>
    transport.connected() ? Effect.void : Effect.fail(new PubSubUnavailable({ message: "redis: not connected" }))
  )

  return BroadcastBus.of({
    publish: (envelope) =>
      encode(envelope).pipe(
        Effect.orDie,
        Effect.flatMap((json) =>
          Effect.tryPromise({ try: () => transport.publishHint(envelope.workspace, json), catch: unavailable })
        ),
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

/**
 * The bus across instances: PUBLISH on the deployment's channel and one SUBSCRIBE per instance on one
 * server; SPUBLISH on the workspace's partition and SSUBSCRIBE to every partition on a cluster.
 */
export const layer: Layer.Layer<BroadcastBus, PubSubUnavailable, RedisConnection> = Layer.effect(BroadcastBus, make)
