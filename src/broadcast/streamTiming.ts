/**
 * Per-stream jitter, as pure functions of a uniform draw `u` in [0, 1)
 * (`Math.random()` in the service, fixed values in tests), so that the tabs
 * of one instance neither reconnect in the same instant nor reach their
 * lifetime together.
 */

/** A reconnection delay in whole milliseconds, uniform over [min, max]. */
export const retryDelayMs = (minMs: number, maxMs: number, u: number): number => {
  const low = Math.ceil(Math.min(minMs, maxMs))
  const high = Math.floor(Math.max(minMs, maxMs))
  if (high <= low) return low
  return Math.min(high, low + Math.floor(clampUnit(u) * (high - low + 1)))
}

/** How much a stream's lifetime varies around the configured one: ±10%. */
export const lifetimeJitter = 0.1

/** A stream's lifetime in whole milliseconds: `maxMs` ±10%, at least 1. */
export const lifetimeMs = (maxMs: number, u: number): number =>
  Math.max(1, Math.round(maxMs * (1 - lifetimeJitter + 2 * lifetimeJitter * clampUnit(u))))

const clampUnit = (u: number) => (Number.isFinite(u) ? Math.min(Math.max(u, 0), 1) : 0)
