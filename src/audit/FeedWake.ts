import { Context, Duration, Effect, Layer, Option, Queue } from "effect"
import { BroadcastBus } from "../broadcast/BroadcastBus"
import { PositionedNotices } from "../feedPositions/PositionedNotices"

/**
 * How often a waiting feed reader looks again with no hint: the safety net
 * under the broadcast, which may drop a hint (Redis down, a slow instance).
 */
export const feedRecheck = Duration.seconds(2)

/** A wake-up signal: trips when a unit of the workspace may have committed since it was last cleared. */
export interface Wake {
  /** Forgets the hints so far: call it before each query, so a commit after the query starts wakes the next wait. */
  readonly clear: Effect.Effect<void>
  /** Waits for a hint, at most `atMost` (and never longer than `feedRecheck`). */
  readonly await: (atMost: Duration.Duration) => Effect.Effect<void>
}

const make = Effect.gen(function* () {
  const bus = yield* BroadcastBus
  const positioned = yield* PositionedNotices

  /** A signal for `workspaceId` until the scope closes; without the bus, the re-check alone. */
  const subscribe = (workspaceId: string) =>
    Effect.gen(function* () {
      const hints = yield* Queue.sliding<true>(1)
      const detach = yield* Effect.option(bus.attach(workspaceId, { offer: () => void Queue.offerUnsafe(hints, true) }))
      const detachPositioned = positioned.attach(workspaceId, () => void Queue.offerUnsafe(hints, true))
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          detachPositioned()
          Option.map(detach, (run) => run())
        })
      )
      return {
        clear: Effect.asVoid(Queue.clear(hints)),
        await: (atMost) => Effect.asVoid(Effect.timeoutOption(Queue.take(hints), Duration.min(atMost, feedRecheck)))
      } satisfies Wake
    })

  return { subscribe } as const
})

/**
 * Wake-ups for readers following the feed (long-poll and SSE): the
 * broadcast's `changed` hints of the workspace, published after each commit
 * on every instance, and in WAL mode the positioner's notices (rows are
 * served once positioned, a moment after their commit), with a periodic
 * re-check as a safety net. A hint is
 * only a reason to query again; the feed query is the truth.
 */
export class FeedWake extends Context.Service<FeedWake, Effect.Success<typeof make>>()("FeedWake") {
  static readonly layer = Layer.effect(FeedWake, make)
}
