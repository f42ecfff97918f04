/** How a write that carries an `Idempotency-Key` is retried (ClientOptions.retry). */
export interface RetryOptions {
  /** Attempts in all, the first included (default 3; 1 turns retrying off). */
  readonly attempts?: number
  /** The longest wait between two attempts, whatever `Retry-After` asks for (default 5000 ms). */
  readonly maxDelayMs?: number
}

export const defaultAttempts = 3
export const defaultMaxDelayMs = 5_000
const firstBackoffMs = 250

/**
 * Milliseconds to wait before attempt `attempt + 1`: the answer's
 * `Retry-After` (seconds or an HTTP date) when it has one, else 250 ms
 * doubling per attempt; never more than `maxDelayMs`.
 */
export const retryDelayMs = (
  retryAfter: string | null,
  attempt: number,
  maxDelayMs: number,
  now = Date.now()
): number => {
  const backoff = firstBackoffMs * 2 ** (attempt - 1)
  const asked =
    retryAfter === null
      ? Number.NaN
      : /^\s*\d+\s*$/.test(retryAfter)
        ? Number(retryAfter) * 1_000
        : Date.parse(retryAfter) - now
  const delay = Number.isNaN(asked) ? backoff : asked
  return Math.min(Math.max(0, delay), maxDelayMs)
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))
