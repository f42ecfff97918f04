import type { Effect, PubSub, Scope } from "effect"
import { Context } from "effect"
import type { PubSubUnavailable } from "../api/errors"
import type { BroadcastStatus } from "../api/BroadcastStatus"
import type { Resubscribed } from "./BroadcastStatus"
import type { BroadcastEnvelope } from "./Broadcast"
import type { Detach, HintSink } from "./BroadcastHub"
import type { ReadFilter } from "./ReadFilter"
import type { StreamRevocation } from "./StreamRevocation"
import type { CacheInvalidation } from "./CacheInvalidation"

/**
 * The broadcast port. `publish` hands a hint to every API instance (through
 * Redis, or straight to this process when no Redis is configured); `attach`
 * gives one stream its workspace's hints; `revoke` ends streams wherever they
 * are open. Both implementations share one
 * instance-local hub, so everything above the transport runs the same code.
 */
export interface BroadcastBusShape {
  /** Fire-and-forget from the writer's point of view: callers log failures, never retry. */
  readonly publish: (envelope: BroadcastEnvelope) => Effect.Effect<void, PubSubUnavailable>
  /**
   * Hands `sink` the hints of this workspace that `filter` lets through, until
   * the returned `detach` is called (synchronous, idempotent: a stream calls it
   * from its socket's close event). Fails fast when the store is down.
   */
  readonly attach: (workspace: string, sink: HintSink, filter?: ReadFilter) => Effect.Effect<Detach, PubSubUnavailable>
  /** Open subscriptions on this instance (all workspaces). */
  readonly subscriberCount: Effect.Effect<number>
  /** Whether the shared store answers right now. */
  readonly isHealthy: Effect.Effect<boolean>
  /** "redis" or "in-process": shown by the health route. */
  readonly kind: "redis" | "in-process"
  /** The subscription's state and what was dropped, since start-up (shown by the health route). */
  readonly status: Effect.Effect<BroadcastStatus>
  /**
   * One `Resubscribed` each time the instance's subscription is live again
   * after an outage, from the moment of subscribing (the scope ends it): open
   * tabs may have missed hints and should re-read what they show.
   */
  readonly resubscriptions: Effect.Effect<PubSub.Subscription<Resubscribed>, never, Scope.Scope>
  /**
   * Hands a stream revocation to every instance (this one included), on a
   * control channel of its own. Callers log failures, never retry (see `revokeStreams`).
   */
  readonly revoke: (revocation: StreamRevocation) => Effect.Effect<void, PubSubUnavailable>
  /** Every revocation any instance publishes, from the moment of subscribing (the scope ends it). */
  readonly revocations: Effect.Effect<PubSub.Subscription<StreamRevocation>, never, Scope.Scope>
  /**
   * Hands a cache invalidation to every instance (this one included), on a
   * channel of its own; the subscription and its outages are the bus's own (see `Caches`).
   */
  readonly invalidate: (invalidation: CacheInvalidation) => Effect.Effect<void, PubSubUnavailable>
  /** Every cache invalidation any instance publishes, from the moment of subscribing (the scope ends it). */
  readonly invalidations: Effect.Effect<PubSub.Subscription<CacheInvalidation>, never, Scope.Scope>
}

export class BroadcastBus extends Context.Service<BroadcastBus, BroadcastBusShape>()("BroadcastBus") {}
