import { Context, Duration, Effect, Exit, Fiber, Layer, Option } from "effect"

/**
 * How long a drop lets the workspace's running units end by themselves before
 * it interrupts them. A unit of a job or workflow run normally ends well
 * within it. Interrupting is the last resort: a unit interrupted in the middle
 * of a statement has it cancelled by @effect/sql-pg with `pg_cancel_backend`,
 * which is asynchronous and can land on a later statement of that connection
 * once it is back in the pool (seen as a stray 57014 elsewhere).
 */
const stopGrace = Duration.seconds(5)

/**
 * The background work (jobs, workflow runs) running on this instance, by
 * workspace, so that dropping a workspace can stop its work first: a unit
 * still holding locks in the schema would block DROP SCHEMA or deadlock with it.
 */
export class WorkspaceWork extends Context.Service<WorkspaceWork>()("WorkspaceWork", {
  make: Effect.sync(() => {
    const running = new Map<string, Set<Fiber.Fiber<unknown, unknown>>>()
    const stopping = new Set<string>()

    const track = (workspaceId: string, fiber: Fiber.Fiber<unknown, unknown>) =>
      Effect.sync(() => {
        const fibers = running.get(workspaceId) ?? new Set()
        fibers.add(fiber)
        running.set(workspaceId, fibers)
      })

    const untrack = (workspaceId: string, fiber: Fiber.Fiber<unknown, unknown>) =>
      Effect.sync(() => {
        const fibers = running.get(workspaceId)
        fibers?.delete(fiber)
        if (fibers?.size === 0) running.delete(workspaceId)
      })

    /**
     * Runs `effect` as work of the workspace. None when the workspace is being
     * dropped: either before it started (it does not start) or while it ran
     * (it was interrupted, its transaction rolled back).
     */
    const run = <A, E, R>(workspaceId: string, effect: Effect.Effect<A, E, R>): Effect.Effect<Option.Option<A>, E, R> =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function* () {
          if (stopping.has(workspaceId)) return Option.none<A>()
          const fiber = yield* Effect.forkChild(restore(effect))
          yield* track(workspaceId, fiber)
          // A drop that began between the check above and `track` did not see this fiber.
          if (stopping.has(workspaceId)) fiber.interruptUnsafe()
          const exit = yield* restore(Fiber.await(fiber)).pipe(
            Effect.onInterrupt(() => Fiber.interrupt(fiber)),
            Effect.ensuring(untrack(workspaceId, fiber))
          )
          if (Exit.hasInterrupts(exit) && stopping.has(workspaceId)) return Option.none<A>()
          return yield* Effect.map(exit, Option.some)
        })
      )

    /** Whether the workspace is being dropped by this instance. */
    const isStopping = (workspaceId: string) => Effect.sync(() => stopping.has(workspaceId))

    /**
     * Marks the workspace as being dropped (no new work of it starts here),
     * gives its running work `stopGrace` to end, then interrupts what is left
     * and waits for it to end (its units roll back).
     */
    const stop = (workspaceId: string) =>
      Effect.suspend(() => {
        stopping.add(workspaceId)
        const fibers = [...(running.get(workspaceId) ?? [])]
        if (fibers.length === 0) return Effect.void
        return Fiber.awaitAll(fibers).pipe(
          Effect.timeout(stopGrace),
          Effect.ignore,
          Effect.andThen(Fiber.interruptAll(fibers))
        )
      })

    /** The drop is over (the workspace is gone): forget the mark. */
    const release = (workspaceId: string) => Effect.sync(() => void stopping.delete(workspaceId))

    return { run, isStopping, stop, release } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
