import { Effect, Layer, PubSub } from "effect"
import { BroadcastBus } from "./BroadcastBus"
import * as BroadcastHub from "./BroadcastHub"
import { inProcessStatus } from "./BroadcastStatus"
import type { Resubscribed } from "./BroadcastStatus"
import type { StreamRevocation } from "./StreamRevocation"
import type { CacheInvalidation } from "./CacheInvalidation"

const make = Effect.gen(function* () {
  yield* Effect.logWarning("broadcast bus: in-process, single instance only")
  const hub = yield* BroadcastHub.make()
  const revocations = yield* Effect.acquireRelease(PubSub.unbounded<StreamRevocation>(), PubSub.shutdown)
  const invalidations = yield* Effect.acquireRelease(PubSub.unbounded<CacheInvalidation>(), PubSub.shutdown)
  // Never published to: the bus is this process, it cannot lose its subscription.
  const resubscriptions = yield* Effect.acquireRelease(PubSub.unbounded<Resubscribed>(), PubSub.shutdown)
  return BroadcastBus.of({
    publish: hub.deliver,
    attach: hub.attach,
    subscriberCount: hub.subscriberCount,
    isHealthy: Effect.succeed(true),
    kind: "in-process",
    // Nothing to lose: the bus is this process.
    status: Effect.succeed(inProcessStatus),
    resubscriptions: PubSub.subscribe(resubscriptions),
    revoke: (revocation) => PubSub.publish(revocations, revocation).pipe(Effect.asVoid),
    revocations: PubSub.subscribe(revocations),
    invalidate: (invalidation) => PubSub.publish(invalidations, invalidation).pipe(Effect.asVoid),
    invalidations: PubSub.subscribe(invalidations)
  })
})

/**
 * The bus without Redis: publishing delivers straight to this process's
 * streams (there is no shared subscription to fan out, hence no inbox).
 */
export const layer: Layer.Layer<BroadcastBus> = Layer.effect(BroadcastBus, make)
