import type { Effect, Queue, Scope } from "effect"
import { Context } from "effect"
import type { PubSubUnavailable } from "../errors"
import type { Broadcast, BroadcastEnvelope } from "./Broadcast"

/**
 * The broadcast port. `publish` hands a hint to every API instance (through
 * Redis, or straight to this process when no Redis is configured);
 * `subscribe` gives one stream its own bounded queue of its workspace's hints.
 * Both implementations share one instance-local hub, so everything above the
 * transport runs the same code.
 */
export interface BroadcastBusShape {
  /** Fire-and-forget from the writer's point of view: callers log failures, never retry. */
  readonly publish: (envelope: BroadcastEnvelope) => Effect.Effect<void, PubSubUnavailable>
  /** A queue of this workspace's hints, released with the scope. Fails fast when the store is down. */
  readonly subscribe: (workspace: string) => Effect.Effect<Queue.Dequeue<Broadcast>, PubSubUnavailable, Scope.Scope>
  /** Open subscriptions on this instance (all workspaces). */
  readonly subscriberCount: Effect.Effect<number>
  /** Whether the shared store answers right now. */
  readonly isHealthy: Effect.Effect<boolean>
  /** "redis" or "in-process": shown by the health route. */
  readonly kind: "redis" | "in-process"
}

export class BroadcastBus extends Context.Tag("BroadcastBus")<BroadcastBus, BroadcastBusShape>() {}
