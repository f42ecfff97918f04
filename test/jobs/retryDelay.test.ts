import { describe, expect, it } from "@effect/vitest"
import { Duration, FastCheck } from "effect"
import { maxRetryDelay, retryDelay } from "../../src/workers/retryDelay"

describe("retryDelay", () => {
  it("no wait before the first attempt, then the base, doubling", () => {
    const base = Duration.millis(100)
    expect([0, 1, 2, 3, 4].map((attempts) => Duration.toMillis(retryDelay(base, attempts)))).toEqual([
      0, 100, 200, 400, 800
    ])
  })

  it("never shrinks from one attempt to the next and never exceeds the cap", () => {
    FastCheck.assert(
      FastCheck.property(
        FastCheck.integer({ min: 1, max: 60_000 }),
        FastCheck.integer({ min: 0, max: 200 }),
        (baseMillis, attempts) => {
          const base = Duration.millis(baseMillis)
          const now = retryDelay(base, attempts)
          const next = retryDelay(base, attempts + 1)
          return Duration.lessThanOrEqualTo(now, next) && Duration.lessThanOrEqualTo(next, maxRetryDelay)
        }
      )
    )
  })
})
