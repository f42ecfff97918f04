import type { Scope } from "effect"
import { Effect, Queue } from "effect"
import { Broadcast } from "../../src/api/Broadcast"
import { defaultCapacity } from "../../src/broadcast/BroadcastHub"
import type { Detach, HintSink } from "../../src/broadcast/BroadcastHub"

/**
 * The hints a bus (or hub) hands one workspace, as a sliding queue of a
 * stream's capacity that a test can take from; attached for the scope, the way a stream attaches its writer.
 */
export const subscribeQueue = <E>(
  port: { readonly attach: (workspace: string, sink: HintSink) => Effect.Effect<Detach, E> },
  workspace: string
): Effect.Effect<Queue.Dequeue<Broadcast>, E, Scope.Scope> =>
  Effect.gen(function* () {
    const queue = yield* Effect.acquireRelease(Queue.sliding<Broadcast>(defaultCapacity), Queue.shutdown)
    const sink: HintSink = {
      // `offer`, not `unsafeOffer`: only the effectful offer slides past the oldest. It never suspends.
      offer: (hint) => Effect.runSync(Queue.offer(queue, new Broadcast({ type: hint.type, data: hint.data })))
    }
    // Detached before the queue shuts down (finalizers run in reverse).
    yield* Effect.acquireRelease(port.attach(workspace, sink), (detach) => Effect.sync(detach))
    return queue
  })
