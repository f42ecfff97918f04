import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { lifetimeJitter, lifetimeMs, retryDelayMs } from "../../src/broadcast/streamTiming"

const unit = Arbitrary.schema(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1, exclusiveMaximum: true })))
const integer = (minimum: number, maximum: number) =>
  Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })))

describe("per-stream jitter", () => {
  it.prop(
    "a retry delay is a whole number of milliseconds within [min, max], whatever the draw",
    [integer(1, 600_000), integer(0, 600_000), unit],
    ([min, span, u]) => {
      const delay = retryDelayMs(min, min + span, u)
      return Number.isInteger(delay) && delay >= min && delay <= min + span
    }
  )

  it.prop(
    "retry delays are uniform: draws in order give delays in order",
    [integer(1, 10_000), integer(0, 10_000), unit, unit],
    ([min, span, a, b]) => {
      const [low, high] = a <= b ? [a, b] : [b, a]
      return retryDelayMs(min, min + span, low) <= retryDelayMs(min, min + span, high)
    }
  )

  it("retry delays are uniform: from min (u = 0) up to max (u → 1)", () => {
    expect(retryDelayMs(1_000, 5_000, 0)).toBe(1_000)
    expect(retryDelayMs(1_000, 5_000, 0.999_999_9)).toBe(5_000)
    expect(retryDelayMs(1_000, 5_000, 0.5)).toBe(3_000)
    // Every millisecond of the range can come up: 4,001 values, equally likely.
    expect(new Set(Array.from({ length: 4_001 }, (_, i) => retryDelayMs(1_000, 5_000, (i + 0.5) / 4_001))).size).toBe(
      4_001
    )
  })

  it("a bad draw (NaN, out of [0, 1)) still gives a delay within the range", () => {
    for (const u of [Number.NaN, -1, 1, 2, Number.POSITIVE_INFINITY]) {
      const delay = retryDelayMs(1_000, 5_000, u)
      expect(delay).toBeGreaterThanOrEqual(1_000)
      expect(delay).toBeLessThanOrEqual(5_000)
    }
  })

  it.prop(
    "a lifetime is the configured one ±10%, a whole number of milliseconds, at least 1",
    [integer(1, 86_400_000), unit],
    ([max, u]) => {
      const lifetime = lifetimeMs(max, u)
      return (
        Number.isInteger(lifetime) &&
        lifetime >= 1 &&
        lifetime >= Math.floor(max * (1 - lifetimeJitter)) &&
        lifetime <= Math.ceil(max * (1 + lifetimeJitter))
      )
    }
  )

  it("a lifetime: the configured one at the middle draw, -10% at the lowest", () => {
    expect(lifetimeMs(900_000, 0)).toBe(810_000)
    expect(lifetimeMs(900_000, 0.5)).toBe(900_000)
  })
})
