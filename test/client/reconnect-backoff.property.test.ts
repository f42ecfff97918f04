import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import { defaultBackoff, reconnectDelay } from "../../src/client"

/**
 * The client's own reconnect delays after failures in a row (the server's
 * `retry:` spreads ordinary drops; this spreads a service that stays down):
 * capped, jittered, growing.
 */

const options = fc
  .record({ baseMs: fc.integer({ min: 1, max: 10_000 }), extra: fc.integer({ min: 0, max: 600_000 }) })
  .map(({ baseMs, extra }) => ({ baseMs, maxMs: baseMs + extra }))
const failures = fc.integer({ min: 1, max: 200 })
const draw = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })

describe("reconnectDelay", () => {
  it("is capped: never above maxMs, never below half the first ceiling", () => {
    fc.assert(
      fc.property(options, failures, draw, (backoff, n, random) => {
        const delay = reconnectDelay(n, random, backoff)
        expect(delay).toBeLessThanOrEqual(backoff.maxMs)
        expect(delay).toBeGreaterThanOrEqual(Math.floor(Math.min(backoff.baseMs, backoff.maxMs) / 2))
        expect(Number.isInteger(delay)).toBe(true)
      })
    )
  })

  it("grows: for one draw, the delay after n + 1 failures is never shorter than after n, and reaches the cap", () => {
    fc.assert(
      fc.property(options, failures, draw, (backoff, n, random) => {
        expect(reconnectDelay(n + 1, random, backoff)).toBeGreaterThanOrEqual(reconnectDelay(n, random, backoff))
      })
    )
    // Uncapped, the ceiling doubles with each failure.
    expect([1, 2, 3, 4].map((n) => reconnectDelay(n, 0.999_999, { baseMs: 1_000, maxMs: 1e9 }))).toEqual([
      1_000, 2_000, 4_000, 8_000
    ])
    expect(reconnectDelay(100, 0.999_999, defaultBackoff)).toBe(defaultBackoff.maxMs)
  })

  it("is jittered: over the draws it spans the upper half of its ceiling, so tabs that failed together come back apart", () => {
    fc.assert(
      fc.property(options, failures, (backoff, n) => {
        const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** (n - 1))
        const low = reconnectDelay(n, 0, backoff)
        const high = reconnectDelay(n, 0.999_999_999, backoff)
        expect(low).toBe(Math.round(ceiling / 2))
        expect(high).toBe(Math.round(ceiling))
        const middle = reconnectDelay(n, 0.5, backoff)
        expect(middle).toBeGreaterThanOrEqual(low)
        expect(middle).toBeLessThanOrEqual(high)
        if (ceiling >= 4) expect(new Set([low, middle, high]).size).toBe(3)
      })
    )
  })
})
