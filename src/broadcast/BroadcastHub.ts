import type { Queue, Scope } from "effect"
import { Effect, PubSub } from "effect"
import { Broadcast, type BroadcastEnvelope } from "./Broadcast"

/** Hints one stream may lag behind before it loses its oldest ones. */
export const defaultCapacity = 256

/**
 * The instance-local fan-out shared by both bus implementations. Hints are
 * routed by workspace first, so a broadcast costs work proportional to the
 * streams of its own workspace only.
 */
export interface BroadcastHub {
  /** Hands a hint to the streams of its workspace. Never blocks. */
  readonly deliver: (envelope: BroadcastEnvelope) => Effect.Effect<void>
  /** A queue of this workspace's hints, released with the scope. */
  readonly subscribe: (workspace: string) => Effect.Effect<Queue.Dequeue<Broadcast>, never, Scope.Scope>
  /** Open subscriptions, all workspaces. */
  readonly subscriberCount: Effect.Effect<number>
  /** Workspaces with at least one open subscription. */
  readonly workspaceCount: Effect.Effect<number>
}

interface WorkspaceHub {
  // Sliding: a lagging subscriber loses its oldest hints; the publisher never waits for it.
  readonly pubsub: PubSub.PubSub<Broadcast>
  subscribers: number
}

export const make = (options: { readonly capacity?: number } = {}): Effect.Effect<BroadcastHub> =>
  Effect.sync(() => {
    const capacity = options.capacity ?? defaultCapacity
    // Mutated only inside Effect.sync blocks, which run without interleaving.
    const hubs = new Map<string, WorkspaceHub>()
    let total = 0

    const join = (workspace: string) =>
      Effect.sync(() => {
        let hub = hubs.get(workspace)
        if (hub === undefined) {
          hub = { pubsub: Effect.runSync(PubSub.sliding<Broadcast>(capacity)), subscribers: 0 }
          hubs.set(workspace, hub)
        }
        hub.subscribers++
        total++
        return hub
      })

    // No shutdown: a concurrent `deliver` may still hold the PubSub, and publishing
    // to a shut-down one would interrupt the delivering fiber. It has no subscribers left.
    const part = (workspace: string, hub: WorkspaceHub) =>
      Effect.sync(() => {
        hub.subscribers--
        total--
        if (hub.subscribers === 0 && hubs.get(workspace) === hub) hubs.delete(workspace)
      })

    return {
      deliver: (envelope) =>
        Effect.suspend(() => {
          const hub = hubs.get(envelope.workspace)
          if (hub === undefined) return Effect.void
          return Effect.asVoid(PubSub.publish(hub.pubsub, new Broadcast({ type: envelope.type, data: envelope.data })))
        }),
      // Finalizers run in reverse: the queue unsubscribes before the count drops.
      subscribe: (workspace) =>
        Effect.acquireRelease(join(workspace), (hub) => part(workspace, hub)).pipe(
          Effect.flatMap((hub) => PubSub.subscribe(hub.pubsub))
        ),
      subscriberCount: Effect.sync(() => total),
      workspaceCount: Effect.sync(() => hubs.size)
    }
  })
