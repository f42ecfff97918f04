import { createHash } from "node:crypto"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig"
import { TooManyRequests } from "../api/errors"
import { LoginThrottleStore } from "./LoginThrottleStore"
import type { ThrottlePolicy } from "./ThrottleCounter"
import { normalizeEmail } from "./Users"

/** Where a sign-in comes from and for whom, as typed. */
export interface SignInAttempt {
  readonly email: string
  /** The client's address (see `clientAddress`); undefined when unknown. */
  readonly address?: string | undefined
}

/** The address window: `LOGIN_MAX_PER_ADDRESS` failures a minute, then a minute's wait. */
const addressWindowMs = 60_000
/** An account's wait doubles with each failure past the limit, up to 16 windows. */
const maxDoublings = 4

/**
 * Sign-in throttling, per account (the email as typed, normalized: the same
 * for accounts that exist and those that do not) and per client address.
 * `admit` runs before the password hash is computed, so a refused attempt
 * costs one counter operation; it counts the attempt as a failure until
 * `succeeded` gives it back (the account's failures are then forgotten).
 */
export class LoginThrottle extends Context.Service<LoginThrottle>()("LoginThrottle", {
  make: Effect.gen(function* () {
    const store = yield* LoginThrottleStore
    const config = yield* AppConfig
    const windowMs = Duration.toMillis(config.loginWindow)
    const accountPolicy: ThrottlePolicy = {
      maxFailures: config.loginMaxFailures,
      windowMs,
      maxLockMs: windowMs * 2 ** maxDoublings
    }
    const addressPolicy: ThrottlePolicy = {
      maxFailures: config.loginMaxPerAddress,
      windowMs: addressWindowMs,
      maxLockMs: addressWindowMs
    }

    // Hashed: the counters name no email in Redis.
    const accountKey = (email: string) => `account:${createHash("sha256").update(normalizeEmail(email)).digest("hex")}`
    // An address from X-Forwarded-For is whatever the proxy passed on: bounded, as any key.
    const addressKey = (address: string | undefined) => `address:${address?.slice(0, 64) ?? "unknown"}`

    const refused = (waitMs: number) =>
      new TooManyRequests({
        message: "too many sign-in attempts: wait before trying again",
        retryAfter: Math.max(1, Math.ceil(waitMs / 1000))
      })

    /** The address first: an address that is refused does not count against the account. */
    const admit = (attempt: SignInAttempt) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const addressWait = yield* store.attempt(addressKey(attempt.address), now, addressPolicy)
        if (addressWait > 0) return yield* refused(addressWait)
        const accountWait = yield* store.attempt(accountKey(attempt.email), now, accountPolicy)
        if (accountWait > 0) return yield* refused(accountWait)
      })

    const succeeded = (attempt: SignInAttempt) =>
      Effect.all(
        [store.clear(accountKey(attempt.email)), store.forgiveOne(addressKey(attempt.address), addressPolicy)],
        {
          discard: true
        }
      )

    return { admit, succeeded } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
