import { Effect, Layer, Option } from "effect"
import { actorSpanAttributes } from "../context/actorSpanAttributes"
import { CurrentActor } from "../context/Frames"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { claimRun } from "./CompletedRuns"
import { Records } from "../records/Records"
import { ParentCorrelation } from "../unitOfWork/ParentCorrelation"
import { UnitOfWork } from "../unitOfWork/UnitOfWork"
import { asWorkflowRun } from "../workflows/asWorkflowRun"
import { triggerCause } from "../workflows/WorkflowRun"
import { WorkflowQueue } from "../workflows/WorkflowQueue"
import { runDurableWorker } from "./durableWorker"

/**
 * The in-process workflow engine: runs what the outbound bridge staged, each
 * run in its own unit of work as `workflow:<id>`, in the frame of the event
 * that triggered it. Plugin workflows write through the records service
 * directly, with no permission guard (the engine is not a principal).
 */
export const WorkflowEngineLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const workflows = yield* WorkflowQueue
    const registry = yield* PluginRegistry
    const records = yield* Records
    const units = yield* UnitOfWork

    yield* runDurableWorker({
      kind: "workflow run",
      queue: workflows.queue,
      describe: (run) => ({ name: run.workflowId, workspace: run.workspace }),
      run: (run, id) =>
        Effect.gen(function* () {
          const workflow = registry.workflow(run.workflowId)
          if (Option.isNone(workflow))
            return yield* Effect.die(new Error(`no plugin declares the workflow ${run.workflowId}`))
          yield* Effect.gen(function* () {
            yield* Effect.annotateCurrentSpan(actorSpanAttributes(yield* CurrentActor))
            yield* units.run(
              run.workspace,
              Effect.gen(function* () {
                if (!(yield* claimRun(id, "workflow", run.workflowId))) return
                yield* records.runPlugin(workflow.value.declaration.run(run.event))
              })
            )
          }).pipe(
            asWorkflowRun(run.workflowId, triggerCause(run.event)),
            Effect.provideService(ParentCorrelation, Option.fromNullishOr(run.parentCorrelationId))
          )
        })
    })
  })
)
