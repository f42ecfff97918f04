import { Duration } from "effect"

/**
 * The longest wait between two attempts of a job or workflow run. The worker
 * waits while holding the element; the persisted queue refreshes the lock of
 * an element a live worker holds, so the bound is not about the lock: it keeps
 * a failing run from holding its element (and a worker's slot) for long.
 */
export const maxRetryDelay = Duration.minutes(1)

/**
 * How long to wait before attempt `attempts + 1` when `attempts` have failed:
 * nothing before the first, then `base`, doubling each time, capped.
 */
export const retryDelay = (base: Duration.Duration, attempts: number): Duration.Duration =>
  attempts <= 0 ? Duration.zero : Duration.min(Duration.times(base, 2 ** Math.min(attempts - 1, 30)), maxRetryDelay)
