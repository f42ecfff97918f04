import type { Scope } from "effect"
import { Effect, Exit } from "effect"

/** Runs one batch: one exit per input, in the inputs' order. */
export type RunBatch<I, A, E> = (inputs: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<Exit.Exit<A, E>>>

interface Waiting<I, A, E> {
  readonly input: I
  readonly resume: (exit: Exit.Exit<A, E>) => void
}

/**
 * Coalesces calls made by any fiber during one turn of Node's event loop
 * into one batch, run once the turn's I/O has been handled (`setImmediate`):
 * the heartbeats Node parsed from every socket that was readable in that
 * turn share one SQL query and one Redis script instead of one each. No
 * timer and no Effect `Clock` is involved (tests that move a `TestClock` are
 * not held up), and a lone call waits only for the rest of its turn. A call
 * interrupted before its batch runs leaves it; past `maxBatch` waiting calls
 * a batch starts at once. A batch that dies takes its callers with it.
 */
export const makeTickBatcher = <I, A, E>(
  run: RunBatch<I, A, E>,
  maxBatch = 512
): Effect.Effect<(input: I) => Effect.Effect<A, E>, never, Scope.Scope> =>
  Effect.gen(function* () {
    const runFork = Effect.runForkWith(yield* Effect.context<never>())
    let waiting: Array<Waiting<I, A, E>> = []
    let scheduled: NodeJS.Immediate | undefined
    let closed = false

    const flush = () => {
      scheduled = undefined
      const batch = waiting
      waiting = []
      if (batch.length === 0) return
      runFork(
        run(batch.map((entry) => entry.input)).pipe(
          Effect.exit,
          Effect.flatMap((outcome) =>
            Effect.sync(() => {
              batch.forEach((entry, i) => {
                entry.resume(
                  Exit.isFailure(outcome)
                    ? Exit.failCause(outcome.cause)
                    : (outcome.value[i] ??
                        Exit.die(new Error(`batch answered ${outcome.value.length} of ${batch.length}`)))
                )
              })
            })
          )
        )
      )
    }

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        closed = true
        if (scheduled !== undefined) clearImmediate(scheduled)
        scheduled = undefined
        const left = waiting
        waiting = []
        for (const entry of left) entry.resume(Exit.interrupt())
      })
    )

    return (input: I) =>
      Effect.callback<A, E>((resume) => {
        if (closed) return resume(Exit.interrupt())
        const entry: Waiting<I, A, E> = { input, resume }
        waiting.push(entry)
        if (waiting.length >= maxBatch) {
          if (scheduled !== undefined) clearImmediate(scheduled)
          flush()
        } else if (scheduled === undefined) {
          scheduled = setImmediate(flush)
        }
        return Effect.sync(() => {
          const index = waiting.indexOf(entry)
          if (index >= 0) waiting.splice(index, 1)
        })
      })
  })
