import { apiErrorOf } from "./errors"
import { defaultAttempts, defaultMaxDelayMs, retryDelayMs, sleep } from "./retry"
import type { RetryOptions } from "./retry"

/**
 * The `fetch` every call of the client goes through, at the browser
 * boundary: the caller's `fetch`, a non-2xx answer rejected as an `ApiError`
 * (its body read, the status text kept), and a request that carries an
 * `Idempotency-Key` (a record write) sent again with the same key when
 * `fetch` rejects (a network fault) or the answer is a 503, after its
 * `Retry-After`. Nothing else is retried.
 */
export const sendingFetch = (fetchFn: typeof fetch, retry: RetryOptions = {}): typeof fetch => {
  const attempts = Math.max(1, Math.floor(retry.attempts ?? defaultAttempts))
  const maxDelayMs = retry.maxDelayMs ?? defaultMaxDelayMs
  return async (input, init) => {
    // The write routes' header (api/IdempotencyKey.ts, WriteHeaders): a write made safe to repeat.
    const tries = new Headers(init?.headers).has("idempotency-key") ? attempts : 1
    for (let attempt = 1; ; attempt++) {
      let response: Response
      try {
        response = await fetchFn(input, init)
      } catch (fault) {
        if (attempt >= tries) throw fault
        await sleep(retryDelayMs(null, attempt, maxDelayMs))
        continue
      }
      if (response.status === 503 && attempt < tries) {
        await response.text().catch(() => "")
        await sleep(retryDelayMs(response.headers.get("retry-after"), attempt, maxDelayMs))
        continue
      }
      if (!response.ok) throw await apiErrorOf(response)
      return response
    }
  }
}
