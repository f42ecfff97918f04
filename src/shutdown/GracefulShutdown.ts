import { Context, Duration, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig"
import { Readiness } from "../health/Readiness"

/** One part of the instance that has work to finish before it stops. */
interface DrainStep {
  readonly name: string
  /** Runs before any step drains: what must happen before, e.g., the server closes its idle connections. */
  readonly announce: Effect.Effect<void>
  readonly drain: Effect.Effect<void>
}

/**
 * The drain of this instance when it stops (SIGTERM, SIGINT, or a test
 * closing the app). Parts register a step at start-up (`onDrain`): the HTTP
 * server, the broadcast streams, the job and workflow workers. On shutdown,
 * before anything else closes, readiness turns "draining" (503), each step
 * announces it (the streams send their last event), then every step drains
 * at once; a step completes when its part has nothing left. At
 * `DRAIN_TIMEOUT_MS` the steps still running are interrupted, and each then
 * cuts what it has left (see each step). Only after that do the server, the
 * workers, the pools and Redis close as usual.
 */
export class GracefulShutdown extends Context.Service<GracefulShutdown>()("GracefulShutdown", {
  make: Effect.sync(() => {
    const steps: Array<DrainStep> = []
    return {
      /**
       * Registers what `name` does when the instance drains. `drain` must end
       * once the part is idle, and cut what is left when it is interrupted (the
       * deadline); it must not fail. `announce`, quick, runs before every
       * step's `drain` starts.
       */
      onDrain: (name: string, drain: Effect.Effect<void>, options: { readonly announce?: Effect.Effect<void> } = {}) =>
        Effect.sync(() => void steps.push({ name, drain, announce: options.announce ?? Effect.void })),
      steps: Effect.sync((): ReadonlyArray<DrainStep> => [...steps])
    } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}

/** Runs the drain: readiness first, then every step at once, bounded by `DRAIN_TIMEOUT_MS`. */
const drain = Effect.gen(function* () {
  const config = yield* AppConfig
  const readiness = yield* Readiness
  const shutdown = yield* GracefulShutdown
  const started = Date.now()
  yield* readiness.startDraining
  const steps = yield* shutdown.steps
  yield* Effect.logInfo("shutdown: draining").pipe(
    Effect.annotateLogs({
      drainTimeoutMs: Duration.toMillis(config.drainTimeout),
      steps: steps.map((step) => step.name)
    })
  )
  yield* Effect.forEach(steps, (step) => step.announce, { discard: true })
  const pending = new Set(steps.map((step) => step.name))
  const all = Effect.forEach(
    steps,
    (step) =>
      step.drain.pipe(
        Effect.andThen(Effect.logDebug(`shutdown: ${step.name} drained`)),
        Effect.andThen(Effect.sync(() => pending.delete(step.name)))
      ),
    { concurrency: "unbounded", discard: true }
  )
  // A finalizer runs uninterruptibly: without `interruptible` the deadline could not interrupt the steps.
  const finished = yield* all.pipe(Effect.interruptible, Effect.timeoutOption(config.drainTimeout))
  const durationMs = Date.now() - started
  if (Option.isSome(finished)) {
    yield* Effect.logInfo("shutdown: drained").pipe(Effect.annotateLogs({ durationMs }))
  } else {
    yield* Effect.logWarning("shutdown: drain timed out; what was left has been cut").pipe(
      Effect.annotateLogs({ durationMs, cut: [...pending] })
    )
  }
})

/**
 * Put on top of the whole app (built last, so its finalizer runs first): when
 * the app's scope closes, the drain runs while the server, the workers and
 * every service are still up.
 */
export const DrainOnShutdownLive: Layer.Layer<never, never, AppConfig | Readiness | GracefulShutdown> =
  Layer.effectDiscard(
    Effect.gen(function* () {
      const context = yield* Effect.context<AppConfig | Readiness | GracefulShutdown>()
      yield* Effect.addFinalizer(() => Effect.provideContext(drain, context))
    })
  )
