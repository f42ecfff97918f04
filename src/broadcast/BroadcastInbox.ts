import type { Scope } from "effect"
import { Effect, PubSub } from "effect"
import type { BroadcastEnvelope } from "./Broadcast"
import type { BroadcastHub } from "./BroadcastHub"

/** Broadcasts the inbox holds for the router at most; past that, the oldest are dropped. */
export const inboxCapacity = 16_384

/** Broadcasts the router takes from the inbox at once. */
const batch = 1_024

export interface BroadcastInbox {
  /** Hands a broadcast to this instance's streams. Never blocks: a full inbox drops its oldest. */
  readonly offer: (envelope: BroadcastEnvelope) => void
}

/**
 * The instance's one shared subscription, as an Effect `PubSub`: whatever
 * arrives (from the one Redis SUBSCRIBE, or from this process when there is no
 * Redis) is published to it, and one router fiber, its subscriber, routes each
 * broadcast by workspace into the hub, which fans it out to the streams of that
 * workspace only. Sliding and bounded, so a burst can neither grow memory
 * without limit nor hold up the transport's callback.
 */
export const makeInbox = (hub: BroadcastHub): Effect.Effect<BroadcastInbox, never, Scope.Scope> =>
  Effect.gen(function* () {
    const pubsub = yield* Effect.acquireRelease(PubSub.sliding<BroadcastEnvelope>(inboxCapacity), PubSub.shutdown)
    const routed = yield* PubSub.subscribe(pubsub)
    const route = (envelopes: Iterable<BroadcastEnvelope>) =>
      Effect.sync(() => {
        for (const envelope of envelopes) hub.unsafeDeliver(envelope)
      })
    yield* PubSub.takeBetween(routed, 1, batch).pipe(Effect.flatMap(route), Effect.forever, Effect.forkScoped)
    // `publish`, not `publishUnsafe`: only the effectful one slides past the oldest. It never suspends.
    return { offer: (envelope) => void Effect.runSync(PubSub.publish(pubsub, envelope)) }
  })
