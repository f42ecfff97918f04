import * as PersistedQueue from "effect/persistence/PersistedQueue"
import { Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig"
import { CurrentActor } from "../context/Frames"
import { MissingActor } from "../context/MissingActor"
import type { RecordValues } from "../api/Json"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { immediateRetry, queueName } from "../queue/DurableQueues"
import { CurrentUnit } from "../unitOfWork/CurrentUnit"
import { JobEnvelope } from "./JobEnvelope"

/**
 * The producer side of background jobs. `enqueue` runs inside a unit of work:
 * the queue row is written on the unit's transaction, so a rolled-back unit
 * enqueues nothing, and the envelope captures the unit's current actor.
 */
export class JobQueue extends Context.Service<JobQueue>()("JobQueue", {
  make: Effect.gen(function* () {
    const config = yield* AppConfig
    const registry = yield* PluginRegistry
    const queue = yield* PersistedQueue.make({
      name: queueName(config.queuePrefix, "jobs"),
      schema: JobEnvelope,
      maxAttempts: config.jobMaxAttempts,
      // The worker waits before a retry itself (`retryDelay`): the queue hands the element out again at once.
      retrySchedule: immediateRetry
    })

    const enqueue = (job: string, payload: RecordValues) =>
      Effect.gen(function* () {
        if (Option.isNone(registry.job(job))) return yield* Effect.die(new Error(`unknown job: ${job}`))
        // Required: enqueueing outside a unit of work would not be atomic with anything.
        const { workspace, correlationId } = yield* CurrentUnit
        const actor = yield* CurrentActor
        if (Option.isNone(actor)) return yield* Effect.die(new MissingActor({ while: `enqueueing job ${job}` }))
        return yield* queue
          .offer({ workspace, job, payload, actor: actor.value, parentCorrelationId: correlationId })
          .pipe(Effect.orDie)
      })

    return { enqueue, queue } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
