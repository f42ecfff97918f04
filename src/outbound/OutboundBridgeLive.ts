import { Effect, Layer } from "effect"
import { BroadcastBus } from "../broadcast/BroadcastBus"
import { publishHint } from "../broadcast/publishHint"
import { WorkflowQueue } from "../workflows/WorkflowQueue"
import { OutboundBridge } from "./OutboundBridge"

/**
 * Stages workflow runs in the transaction (see `WorkflowQueue`). Publishes one `changed` hint per record a committed unit touched (several
 * events on one record make one hint: it only means "refetch"). Publishing
 * runs detached from the writer: a failure is logged with the workspace and
 * the object, never retried, never seen by the writer.
 */
export const OutboundBridgeLive = Layer.effect(
  OutboundBridge,
  Effect.gen(function* () {
    const bus = yield* BroadcastBus
    const workflows = yield* WorkflowQueue
    return OutboundBridge.of({
      stage: workflows.stage,
      handOff: (workspace, events) => {
        if (events.length === 0) return Effect.void
        // Only the names are kept: the detached publisher must not hold the events' values (a bulk write's
        // thousand records) after the writer is done with them.
        const touched = new Map(
          events.map(({ businessObject, businessObjectId }) => [
            `${businessObject}\n${businessObjectId}`,
            { workspace: workspace.id, businessObject, businessObjectId }
          ])
        )
        return Effect.forEach(touched.values(), (hint) => publishHint(bus, "changed", hint), {
          discard: true
        }).pipe(
          Effect.catchCause((cause) => Effect.logError("broadcast hand-off failed", cause)),
          Effect.forkDetach,
          Effect.asVoid
        )
      }
    })
  })
)
