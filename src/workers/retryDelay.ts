import { Duration } from "effect"

/**
 * The longest wait between two attempts of a job or workflow run. The worker
 * waits while holding the element, and the persisted queue hands an element
 * held for 2 minutes to another worker (its lock expiry, which it does not
 * refresh here), so the wait stays well below that.
 */
export const maxRetryDelay = Duration.minutes(1)

/**
 * How long to wait before attempt `attempts + 1` when `attempts` have failed:
 * nothing before the first, then `base`, doubling each time, capped.
 */
export const retryDelay = (base: Duration.Duration, attempts: number): Duration.Duration =>
  attempts <= 0 ? Duration.zero : Duration.min(Duration.times(base, 2 ** Math.min(attempts - 1, 30)), maxRetryDelay)
