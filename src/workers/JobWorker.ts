import { Effect, Layer, Option } from "effect"
import { actorSpanAttributes } from "../context/actorSpanAttributes"
import { CurrentActor, withCause } from "../context/Frames"
import { JobQueue } from "../jobs/JobQueue"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { claimRun } from "./CompletedRuns"
import { Records } from "../records/Records"
import { ParentCorrelation } from "../unitOfWork/ParentCorrelation"
import { UnitOfWork } from "../unitOfWork/UnitOfWork"
import { runDurableWorker } from "./durableWorker"

/**
 * Runs background jobs. Each runs in a fiber of its own with no request
 * context: the actor captured in the envelope is restored before the handler
 * runs (none if the envelope has none, and then every write fails), and the
 * handler's writes name the job as their cause, in one unit of work.
 */
export const JobWorkerLive = Layer.effectDiscard(
  Effect.gen(function* () {
    const jobs = yield* JobQueue
    const registry = yield* PluginRegistry
    const records = yield* Records
    const units = yield* UnitOfWork

    yield* runDurableWorker({
      kind: "job",
      queue: jobs.queue,
      describe: (envelope) => ({ name: envelope.job, workspace: envelope.workspace }),
      run: (envelope, id) =>
        Effect.gen(function* () {
          const job = registry.job(envelope.job)
          if (Option.isNone(job)) return yield* Effect.die(new Error(`no plugin declares the job ${envelope.job}`))
          yield* Effect.annotateCurrentSpan(actorSpanAttributes(yield* CurrentActor))
          yield* units.run(
            envelope.workspace,
            Effect.gen(function* () {
              if (!(yield* claimRun(id, "job", envelope.job))) return
              yield* records.runPlugin(job.value.run(envelope.payload))
            })
          )
        }).pipe(
          withCause({ kind: "job", job: envelope.job, jobId: id }),
          Effect.provideService(CurrentActor, Option.fromNullishOr(envelope.actor)),
          Effect.provideService(ParentCorrelation, Option.fromNullishOr(envelope.parentCorrelationId))
        )
    })
  })
)
