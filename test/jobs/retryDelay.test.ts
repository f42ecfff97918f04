import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Duration, Schema } from "effect"
import { maxRetryDelay, retryDelay } from "../../src/workers/retryDelay"

describe("retryDelay", () => {
  it("no wait before the first attempt, then the base, doubling", () => {
    const base = Duration.millis(100)
    expect([0, 1, 2, 3, 4].map((attempts) => Duration.toMillis(retryDelay(base, attempts)))).toEqual([
      0, 100, 200, 400, 800
    ])
  })

  it.prop(
    "never shrinks from one attempt to the next and never exceeds the cap",
    [
      Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 60_000 }))),
      Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 200 })))
    ],
    ([baseMillis, attempts]) => {
      const base = Duration.millis(baseMillis)
      const now = retryDelay(base, attempts)
      const next = retryDelay(base, attempts + 1)
      return Duration.isLessThanOrEqualTo(now, next) && Duration.isLessThanOrEqualTo(next, maxRetryDelay)
    }
  )
})
