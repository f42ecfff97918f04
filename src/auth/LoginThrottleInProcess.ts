import { Effect, Layer } from "effect"
import { LoginThrottleStore } from "./LoginThrottleStore"
import type { LoginThrottleStoreShape } from "./LoginThrottleStore"
import { attempt, forgiveOne } from "./ThrottleCounter"
import type { Counter } from "./ThrottleCounter"

/**
 * The counters in a Map of this process. Forgotten counters are swept once
 * the map has doubled since the last sweep, so guesses at many accounts
 * never grow it for longer than a window.
 */
export const makeInProcess = (): LoginThrottleStoreShape => {
  const counters = new Map<string, Counter>()
  let sweepAt = 1024

  const sweep = (nowMs: number) => {
    if (counters.size < sweepAt) return
    for (const [key, counter] of counters)
      if (counter.resetAt <= nowMs && counter.lockedUntil <= nowMs) counters.delete(key)
    sweepAt = Math.max(1024, counters.size * 2)
  }

  const put = (key: string, counter: Counter | undefined) => {
    if (counter === undefined) counters.delete(key)
    else counters.set(key, counter)
  }

  return {
    attempt: (key, nowMs, policy) =>
      Effect.sync(() => {
        sweep(nowMs)
        const { next, waitMs } = attempt(counters.get(key), nowMs, policy)
        put(key, next)
        return waitMs
      }),
    forgiveOne: (key, policy) => Effect.sync(() => put(key, forgiveOne(counters.get(key), policy))),
    clear: (key) => Effect.sync(() => void counters.delete(key)),
    kind: "in-process"
  }
}

/** Without Redis: the counts of this instance only. */
export const layer: Layer.Layer<LoginThrottleStore> = Layer.sync(LoginThrottleStore, makeInProcess)
