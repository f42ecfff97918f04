import { Effect } from "effect"
import { TooManyRequests } from "../api/errors"
import type { Credential } from "../api/Principal"

/**
 * At most `cap` long-lived feed answers (SSE streams and waiting long-polls)
 * per credential on one instance: each one queries again on every commit of
 * its workspace, so without a cap one caller could multiply the database's
 * work at will. One more is refused with 429 (the broadcast's streams close
 * their oldest instead: a tab that is gone leaves a stream behind, while a
 * feed consumer decides itself how many it opens).
 */
export const makeFeedWaiterCap = (cap: number) => {
  const held = new Map<string, number>()
  const keyOf = (credential: Credential) =>
    credential._tag === "Session" ? `session:${credential.tokenHash}` : `key:${credential.keyId}`

  /** Takes a place for `credential`, or fails 429; the release is idempotent. */
  const take = (credential: Credential) =>
    Effect.suspend(() => {
      const key = keyOf(credential)
      const count = held.get(key) ?? 0
      if (count >= cap) {
        return Effect.fail(
          new TooManyRequests({
            message: `at most ${cap} feed streams and waiting long-polls per session or API key on one instance: close one first`,
            retryAfter: 1
          })
        )
      }
      held.set(key, count + 1)
      let released = false
      return Effect.succeed(() => {
        if (released) return
        released = true
        const left = (held.get(key) ?? 1) - 1
        if (left === 0) held.delete(key)
        else held.set(key, left)
      })
    })

  return { take } as const
}
