import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { defaultBackoff, reconnectDelay } from "../../src/client"

/**
 * The client's own reconnect delays after failures in a row (the server's
 * `retry:` spreads ordinary drops; this spreads a service that stays down):
 * capped, jittered, growing.
 */

const integer = (minimum: number, maximum: number) => Schema.Int.check(Schema.isBetween({ minimum, maximum }))

const options = Arbitrary.all({
  baseMs: Arbitrary.schema(integer(1, 10_000)),
  extra: Arbitrary.schema(integer(0, 600_000))
}).pipe(Arbitrary.map(({ baseMs, extra }) => ({ baseMs, maxMs: baseMs + extra })))
const failures = integer(1, 200)
const draw = Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1, exclusiveMaximum: true }))

describe("reconnectDelay", () => {
  it.prop(
    "is capped: never above maxMs, never below half the first ceiling",
    { backoff: options, n: failures, random: draw },
    ({ backoff, n, random }) => {
      const delay = reconnectDelay(n, random, backoff)
      expect(delay).toBeLessThanOrEqual(backoff.maxMs)
      expect(delay).toBeGreaterThanOrEqual(Math.floor(Math.min(backoff.baseMs, backoff.maxMs) / 2))
      expect(Number.isInteger(delay)).toBe(true)
    }
  )

  it.prop(
    "grows: for one draw, the delay after n + 1 failures is never shorter than after n",
    { backoff: options, n: failures, random: draw },
    ({ backoff, n, random }) => {
      expect(reconnectDelay(n + 1, random, backoff)).toBeGreaterThanOrEqual(reconnectDelay(n, random, backoff))
    }
  )

  it("grows: uncapped, the ceiling doubles with each failure, and it reaches the cap", () => {
    expect([1, 2, 3, 4].map((n) => reconnectDelay(n, 0.999_999, { baseMs: 1_000, maxMs: 1e9 }))).toEqual([
      1_000, 2_000, 4_000, 8_000
    ])
    expect(reconnectDelay(100, 0.999_999, defaultBackoff)).toBe(defaultBackoff.maxMs)
  })

  it.prop(
    "is jittered: over the draws it spans the upper half of its ceiling, so tabs that failed together come back apart",
    { backoff: options, n: failures },
    ({ backoff, n }) => {
      const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** (n - 1))
      const low = reconnectDelay(n, 0, backoff)
      const high = reconnectDelay(n, 0.999_999_999, backoff)
      expect(low).toBe(Math.round(ceiling / 2))
      expect(high).toBe(Math.round(ceiling))
      const middle = reconnectDelay(n, 0.5, backoff)
      expect(middle).toBeGreaterThanOrEqual(low)
      expect(middle).toBeLessThanOrEqual(high)
      if (ceiling >= 4) expect(new Set([low, middle, high]).size).toBe(3)
    }
  )
})
