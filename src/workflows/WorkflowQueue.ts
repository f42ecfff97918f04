import * as PersistedQueue from "effect/persistence/PersistedQueue"
import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig"
import type { BusinessObjectEvent } from "../events/BusinessObjectEvent"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { immediateRetry, queueName } from "../queue/DurableQueues"
import type { Workspace } from "../api/Workspace"
import { WorkflowRun } from "./WorkflowRun"

/**
 * The workflow engine's intake. `stage` runs inside the unit's transaction,
 * last: one durable run per (event, matching workflow), committed with the
 * change itself. So a rolled-back unit starts nothing, and a crash between
 * COMMIT and the run loses nothing: the engine takes the run after a restart.
 */
export class WorkflowQueue extends Context.Service<WorkflowQueue>()("WorkflowQueue", {
  make: Effect.gen(function* () {
    const config = yield* AppConfig
    const registry = yield* PluginRegistry
    const queue = yield* PersistedQueue.make({
      name: queueName(config.queuePrefix, "workflows"),
      schema: WorkflowRun,
      maxAttempts: config.jobMaxAttempts,
      // The worker waits before a retry itself (`retryDelay`): the queue hands the element out again at once.
      retrySchedule: immediateRetry
    })

    const stage = (workspace: Workspace, events: ReadonlyArray<BusinessObjectEvent>, correlationId: string) =>
      Effect.forEach(
        events.flatMap((event) =>
          registry.workflowsFor(event.businessObject, event.operation).map(
            (workflow): WorkflowRun => ({
              workspace,
              workflowId: workflow.id,
              parentCorrelationId: correlationId,
              event: {
                operation: event.operation,
                businessObject: event.businessObject,
                businessObjectId: event.businessObjectId,
                before: event.before,
                after: event.after
              }
            })
          )
        ),
        (run) => queue.offer(run),
        { discard: true }
      ).pipe(Effect.orDie)

    return { stage, queue } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
