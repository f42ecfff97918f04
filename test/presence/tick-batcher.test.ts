import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber } from "effect"
import { makeTickBatcher } from "../../src/presence/tickBatcher"

/**
 * The batcher behind presence heartbeats: calls made together share one run,
 * each gets its own answer, and nothing waits on a clock (these tests run
 * under the TestClock, which never moves).
 */

/** A batcher that records every batch it ran; input n fails when n is negative. */
const recording = Effect.gen(function* () {
  const batches: Array<ReadonlyArray<number>> = []
  const call = yield* makeTickBatcher((inputs: ReadonlyArray<number>) =>
    Effect.sync(() => {
      batches.push(inputs)
      return inputs.map((n) => (n < 0 ? Exit.fail(`negative ${n}`) : Exit.succeed(n * 10)))
    })
  )
  return { call, batches }
})

describe("makeTickBatcher", () => {
  it.effect("calls made together run as one batch, each with its own answer", () =>
    Effect.gen(function* () {
      const { call, batches } = yield* recording
      const answers = yield* Effect.all(
        [1, 2, -3, 4].map((n) => Effect.result(call(n))),
        { concurrency: "unbounded" }
      )
      expect(batches).toEqual([[1, 2, -3, 4]])
      expect(answers.map((a) => (a._tag === "Success" ? a.success : a.failure))).toEqual([10, 20, "negative -3", 40])
    })
  )

  it.effect("a call made after a batch ran starts a new one", () =>
    Effect.gen(function* () {
      const { call, batches } = yield* recording
      expect(yield* call(1)).toBe(10)
      expect(yield* call(2)).toBe(20)
      expect(batches).toEqual([[1], [2]])
    })
  )

  it.effect("a call interrupted before its batch runs leaves it", () =>
    Effect.gen(function* () {
      const { call, batches } = yield* recording
      const forked = yield* Effect.forkChild(call(1))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(forked)
      expect(yield* call(2)).toBe(20)
      expect(batches.flat()).toEqual([2])
    })
  )

  it.effect("a batch that dies fails every call in it with the defect", () =>
    Effect.gen(function* () {
      const call = yield* makeTickBatcher<number, number, never>(() => Effect.die(new Error("boom")))
      const exits = yield* Effect.all([Effect.exit(call(1)), Effect.exit(call(2))], { concurrency: "unbounded" })
      for (const exit of exits) {
        expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
        expect(Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "").toContain("boom")
      }
    })
  )

  it.effect("past maxBatch waiting calls a batch starts at once", () =>
    Effect.gen(function* () {
      const batches: Array<ReadonlyArray<number>> = []
      const call = yield* makeTickBatcher(
        (inputs: ReadonlyArray<number>) =>
          Effect.sync(() => {
            batches.push(inputs)
            return inputs.map((n) => Exit.succeed(n))
          }),
        2
      )
      yield* Effect.all([call(1), call(2), call(3)], { concurrency: "unbounded" })
      expect(batches).toEqual([[1, 2], [3]])
    })
  )
})
