import { Duration } from "effect"

/** The longest wait between two attempts of a job or workflow run. */
export const maxRetryDelay = Duration.minutes(5)

/**
 * How long to wait before attempt `attempts + 1` when `attempts` have failed:
 * nothing before the first, then `base`, doubling each time, capped.
 */
export const retryDelay = (base: Duration.Duration, attempts: number): Duration.Duration =>
  attempts <= 0 ? Duration.zero : Duration.min(Duration.times(base, 2 ** Math.min(attempts - 1, 30)), maxRetryDelay)
