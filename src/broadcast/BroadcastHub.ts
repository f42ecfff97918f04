import { Effect } from "effect"
import type { BroadcastEnvelope } from "./Broadcast"
import { type Hint, makeHint } from "./Hint"
import { acceptAll, type ReadFilter } from "./ReadFilter"
import { hintsDelivered } from "../metrics/ServiceMetrics"

/** Hints one stream may lag behind before it loses its oldest ones. */
export const defaultCapacity = 256

/**
 * Where the hub hands a stream its hints. Called synchronously, in order,
 * on the delivering call: it must not block and must not throw. Bounding,
 * dropping and coalescing are the sink's business.
 */
export interface HintSink {
  readonly offer: (hint: Hint) => void
}

/** Removes a sink from the hub; calling it again does nothing. */
export type Detach = () => void

/**
 * The instance-local fan-out shared by both bus implementations. Hints are
 * routed by workspace first, so a broadcast costs work proportional to the
 * streams of its own workspace only; it is encoded once, and the permission
 * filter runs once per distinct grant set rather than once per stream.
 */
export interface BroadcastHub {
  /** Hands a hint to the streams of its workspace. Never blocks. */
  readonly deliver: (envelope: BroadcastEnvelope) => Effect.Effect<void>
  /** `deliver` outside an Effect, for transport callbacks (the Redis message handler). */
  readonly unsafeDeliver: (envelope: BroadcastEnvelope) => void
  /** Adds a sink for the hints `filter` lets through, until `detach` is called. */
  readonly attach: (workspace: string, sink: HintSink, filter?: ReadFilter) => Effect.Effect<Detach>
  /** Open subscriptions, all workspaces. */
  readonly subscriberCount: Effect.Effect<number>
  /** Workspaces with at least one open subscription. */
  readonly workspaceCount: Effect.Effect<number>
}

/** The sinks of one workspace, grouped by filter: streams with the same grants share one check. */
type Sinks = Map<ReadFilter, Set<HintSink>>

export const make = (): Effect.Effect<BroadcastHub> =>
  Effect.map(Effect.context<never>(), (context) => {
    const workspaces = new Map<string, Sinks>()
    let total = 0

    const add = (workspace: string, sink: HintSink, filter: ReadFilter) => {
      let sinks = workspaces.get(workspace)
      if (sinks === undefined) {
        sinks = new Map()
        workspaces.set(workspace, sinks)
      }
      let group = sinks.get(filter)
      if (group === undefined) {
        group = new Set()
        sinks.set(filter, group)
      }
      if (group.has(sink)) return
      group.add(sink)
      total++
    }

    const remove = (workspace: string, sink: HintSink, filter: ReadFilter) => {
      const sinks = workspaces.get(workspace)
      const group = sinks?.get(filter)
      if (sinks === undefined || group === undefined || !group.delete(sink)) return
      total--
      if (group.size === 0) sinks.delete(filter)
      if (sinks.size === 0) workspaces.delete(workspace)
    }

    // A sink removed while a delivery iterates is skipped; one added is reached or not.
    const unsafeDeliver = (envelope: BroadcastEnvelope) => {
      const sinks = workspaces.get(envelope.workspace)
      if (sinks === undefined) return
      const hint = makeHint(envelope.type, envelope.data)
      for (const [filter, group] of sinks) {
        if (!filter(hint.data.businessObject)) continue
        for (const sink of group) sink.offer(hint)
        hintsDelivered.updateUnsafe(group.size, context)
      }
    }

    const attach = (workspace: string, sink: HintSink, filter: ReadFilter = acceptAll) =>
      Effect.sync((): Detach => {
        add(workspace, sink, filter)
        return () => remove(workspace, sink, filter)
      })

    return {
      deliver: (envelope) => Effect.sync(() => unsafeDeliver(envelope)),
      unsafeDeliver,
      attach,
      subscriberCount: Effect.sync(() => total),
      workspaceCount: Effect.sync(() => workspaces.size)
    }
  })
