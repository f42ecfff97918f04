import type * as PersistedQueue from "effect/persistence/PersistedQueue"
import type { Scope } from "effect"
import { Cause, Effect, Fiber, Metric, Option, References, Semaphore } from "effect"
import { queueRunFailures } from "../metrics/ServiceMetrics"
import { AppConfig } from "../config/AppConfig"
import { isWorkspaceGone } from "../db/DatabaseFault"
import { GracefulShutdown } from "../shutdown/GracefulShutdown"
import type { Workspace } from "../api/Workspace"
import { Workspaces } from "../tenancy/Workspaces"
import { WorkspaceWork } from "../tenancy/WorkspaceWork"
import { retryDelay } from "./retryDelay"

/** Fibers taking from one queue at once, per instance. */
const concurrency = 2

export interface DurableWork<A, E, R> {
  /** For logs: "job" or "workflow run". */
  readonly kind: string
  readonly queue: PersistedQueue.PersistedQueue<A>
  readonly describe: (element: A) => { readonly name: string; readonly workspace: Workspace }
  /** Runs one element; its failure rolls its unit back and the element is tried again later. */
  readonly run: (element: A, id: string) => Effect.Effect<void, E, R>
}

/**
 * Takes elements from a durable queue for as long as the scope lives. Before
 * a retry it waits (doubling from `JOB_RETRY_BASE_MS`); after
 * `JOB_MAX_ATTEMPTS` failures the element stays in the queue, marked failed
 * (see `FailedWork`), and an error is logged. Work for a workspace that is
 * gone or being dropped is skipped, stopped by the drop, or (when it failed
 * because the workspace went away under it) finished quietly: done, not failed.
 *
 * Each run is the root of a trace: a span named `work.kind` with the
 * element's name, id, attempt and workspace (the worker adds the actor).
 *
 * On shutdown (its drain step) it takes nothing new and lets what runs
 * finish; at the drain's deadline what still runs is interrupted: its unit
 * rolls back and the queue releases the element at once (the persisted
 * queue's interrupt path clears its lock without counting an attempt), so
 * another instance, or this one after a restart, runs it again.
 */
export const runDurableWorker = <A, E, R>(
  work: DurableWork<A, E, R>
): Effect.Effect<void, never, R | AppConfig | Workspaces | WorkspaceWork | GracefulShutdown | Scope.Scope> =>
  Effect.gen(function* () {
    const config = yield* AppConfig
    const workspaces = yield* Workspaces
    const shutdown = yield* GracefulShutdown
    const workspaceWork = yield* WorkspaceWork
    /** One permit per element being run: the drain takes them all to wait for the running ones. */
    const running = yield* Semaphore.make(concurrency)
    let stopping = false
    /** Whether this service traces at all (`TracingLive`): the runs are traced then, the idle polling never. */
    const tracing = yield* References.TracerEnabled

    const handle = (element: A, meta: { readonly id: string; readonly attempts: number }) => {
      const { name, workspace } = work.describe(element)
      const annotations = { name, id: meta.id, workspace: workspace.slug, attempt: meta.attempts + 1 }
      const isGone = Effect.zipWith(
        workspaceWork.isStopping(workspace.id),
        workspaces.findBySlug(workspace.slug),
        (stopping, live) => stopping || Option.isNone(live) || live.value.id !== workspace.id
      )
      return Effect.gen(function* () {
        yield* Effect.sleep(retryDelay(config.jobRetryBase, meta.attempts))
        if (yield* isGone) return yield* Effect.logInfo(`${work.kind} skipped: its workspace is gone`)
        yield* work.run(element, meta.id)
      }).pipe(
        (run) => workspaceWork.run(workspace.id, run),
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.logInfo(`${work.kind} stopped: its workspace is being dropped`),
            onSome: () => Effect.void
          })
        ),
        // A failure because the workspace went away meanwhile (its schema dropped under the unit, or the
        // unit chosen as a deadlock victim against DROP SCHEMA) is no failure: the element is done.
        Effect.catchCause((cause) =>
          Effect.flatMap(
            isWorkspaceGone(cause) ? Effect.succeed(true) : Effect.orElseSucceed(isGone, () => false),
            (gone) =>
              gone ? Effect.logInfo(`${work.kind} stopped: its workspace was dropped`) : Effect.failCause(cause)
          )
        ),
        Effect.tapCause(() => Metric.update(queueRunFailures.pipe(Metric.withAttributes({ kind: work.kind })), 1)),
        Effect.tapCause((cause) =>
          meta.attempts + 1 >= config.jobMaxAttempts
            ? Effect.logError(`${work.kind} failed for good; it stays in the queue, failed`, Cause.pretty(cause))
            : Effect.logWarning(`${work.kind} failed; it will be tried again`, Cause.pretty(cause))
        ),
        Effect.annotateLogs(annotations),
        Effect.withSpan(work.kind, {
          root: true,
          attributes: {
            "queue.element.name": name,
            "queue.element.id": meta.id,
            "queue.attempt": meta.attempts + 1,
            "workspace.slug": workspace.slug
          }
        }),
        Effect.withTracerEnabled(tracing)
      )
    }

    // Taken during the drain: handed straight back (an interruption releases it, attempts unchanged).
    // Effect 4's queue counts the attempt being handed out (1 on the first); `handle` counts the failed ones before it.
    const handleUnlessStopping = (element: A, meta: { readonly id: string; readonly attempts: number }) =>
      Effect.suspend(() =>
        stopping
          ? Effect.interrupt
          : running.withPermits(1)(handle(element, { id: meta.id, attempts: Math.max(0, meta.attempts - 1) }))
      )

    const taker = work.queue.take(handleUnlessStopping).pipe(
      // The failure is logged above and recorded in the queue; take the next one.
      Effect.catchCause(() => Effect.void),
      // A taker that finishes its element during the drain stops by itself. (It must: an interruption
      // that reaches it while the queue marks the element done, an uninterruptible step, was seen to be lost.)
      Effect.repeat({ while: () => !stopping }),
      // Polling for work every `QUEUE_POLL_MS` would be a trace of its own each time: only the runs are traced.
      Effect.withTracerEnabled(false)
    )
    const takers: Array<Fiber.Fiber<void>> = []
    for (let i = 0; i < concurrency; i++) takers.push(yield* Effect.forkScoped(taker))

    yield* shutdown.onDrain(
      work.kind,
      Effect.suspend(() => {
        stopping = true
        return running.take(concurrency)
      }).pipe(
        // Idle takers wait for a next element: interrupted. At the deadline, so is the work still running.
        Effect.ensuring(Fiber.interruptAll(takers))
      )
    )
  })
