import { Effect, Metric } from "effect"
import { withSpanIfTracing } from "../context/withSpanIfTracing"
import { hintsDropped, hintsPublished } from "../metrics/ServiceMetrics"
import { BroadcastEnvelope } from "./Broadcast"
import type { BroadcastType } from "../api/Broadcast"
import type { BroadcastBusShape } from "./BroadcastBus"

/**
 * Publishes one hint, fire-and-forget: a failure is logged with the
 * workspace and the object, never retried, never passed to the caller.
 * The publish (to Redis, or the in-process bus) is a `broadcast publish` span.
 */
export const publishHint = (
  bus: BroadcastBusShape,
  type: BroadcastType,
  hint: { readonly workspace: string; readonly businessObject: string; readonly businessObjectId: string }
) =>
  bus
    .publish(
      // Built from typed values of the service's own, not input: the class need not check them again.
      new BroadcastEnvelope(
        {
          workspace: hint.workspace,
          type,
          data: { businessObject: hint.businessObject, businessObjectId: hint.businessObjectId }
        },
        { disableChecks: true }
      )
    )
    .pipe(
      withSpanIfTracing("broadcast publish", {
        kind: "producer",
        captureStackTrace: false,
        attributes: {
          "workspace.slug": hint.workspace,
          "broadcast.type": type,
          "business_object.name": hint.businessObject,
          "business_object.id": hint.businessObjectId
        }
      }),
      Effect.andThen(Metric.update(hintsPublished, 1)),
      Effect.catch((error) =>
        Effect.logWarning(`${type} broadcast publish failed`, error.message).pipe(
          Effect.andThen(Metric.update(hintsDropped, 1)),
          Effect.annotateLogs({
            workspace: hint.workspace,
            businessObject: hint.businessObject,
            businessObjectId: hint.businessObjectId
          })
        )
      )
    )
