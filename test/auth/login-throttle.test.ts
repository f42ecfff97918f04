import { describe, expect, it, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Redacted, Ref } from "effect"
import { TestClock } from "effect/testing"
import { Authentication } from "../../src/auth/Authentication"
import { LoginThrottle } from "../../src/auth/LoginThrottle"
import type { LoginThrottleStore } from "../../src/auth/LoginThrottleStore"
import * as LoginThrottleInProcess from "../../src/auth/LoginThrottleInProcess"
import * as LoginThrottleRedis from "../../src/auth/LoginThrottleRedis"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Memberships } from "../../src/auth/Memberships"
import { Sessions } from "../../src/auth/Sessions"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { Users } from "../../src/auth/Users"
import type { AppConfig } from "../../src/config/AppConfig"
import { TooManyRequests } from "../../src/api/errors"
import { RedisConnection } from "../../src/redis/RedisConnection"
import { eventually } from "../broadcast/streamHelpers"
import {
  baseUrl,
  freshUser,
  freshWorkspace,
  testApp,
  testConfig,
  testPassword,
  testRedisUrl,
  testServices,
  uniqueSuffix
} from "../support/TestApp"
import { login as signInAt } from "../support/login"
import type { TestResponse } from "../support/http"

const window = Duration.minutes(15)
const windowMs = Duration.toMillis(window)

/** The throttle over one store, with 3 failures per account per window and 5 per address per minute. */
const throttleOver = (store: Layer.Layer<LoginThrottleStore, never, RedisConnection | AppConfig>) =>
  LoginThrottle.layer.pipe(
    Layer.provide(store),
    Layer.provide(RedisConnection.layer(Redacted.make(testRedisUrl))),
    Layer.provide(testConfig({ loginMaxFailures: 3, loginWindow: window, loginMaxPerAddress: 5 }))
  )

/** The wait `admit` answers, in seconds, or 0 when admitted. */
const waitOf = (email: string, address: string) =>
  LoginThrottle.use((throttle) => throttle.admit({ email, address })).pipe(
    Effect.as(0),
    Effect.catchTag("TooManyRequests", (refused) => Effect.succeed(refused.retryAfter))
  )

const rules = {
  "3 failures per account, then one window's wait, doubling with each further failure; a success forgets them":
    Effect.gen(function* () {
      const throttle = yield* LoginThrottle
      const email = `Someone-${uniqueSuffix()}@Example.com`
      // Each from another address: only the account counts here.
      for (const n of [1, 2, 3]) expect(yield* waitOf(email, `10.0.0.${n}`)).toBe(0)
      // The email as typed, normalized: the same account.
      expect(yield* waitOf(`  ${email.toLowerCase()} `, "10.0.0.4")).toBe(windowMs / 1000)
      yield* TestClock.adjust(Duration.minutes(5))
      expect(yield* waitOf(email, "10.0.0.5")).toBe(windowMs / 1000 - 5 * 60)

      yield* TestClock.adjust(Duration.minutes(10))
      expect(yield* waitOf(email, "10.0.0.6")).toBe(0) // the window passed: one more try...
      expect(yield* waitOf(email, "10.0.0.7")).toBe((2 * windowMs) / 1000) // ...wrong again: twice as long
      yield* TestClock.adjust(Duration.times(window, 2))
      expect(yield* waitOf(email, "10.0.0.8")).toBe(0)
      yield* throttle.succeeded({ email, address: "10.0.0.8" })
      for (const n of [1, 2, 3]) expect(yield* waitOf(email, `10.0.1.${n}`)).toBe(0)
    }),

  "5 failures per address and minute, over any accounts; a success gives its attempt back": Effect.gen(function* () {
    const throttle = yield* LoginThrottle
    const address = `192.0.2.${uniqueSuffix()}`
    const email = (n: number) => `guess-${n}-${uniqueSuffix()}@example.com`
    for (const n of [1, 2, 3, 4]) expect(yield* waitOf(email(n), address)).toBe(0)
    const mine = email(5)
    expect(yield* waitOf(mine, address)).toBe(0)
    yield* throttle.succeeded({ email: mine, address })
    expect(yield* waitOf(email(6), address)).toBe(0)
    expect(yield* waitOf(email(7), address)).toBe(60)
    yield* TestClock.adjust(Duration.minutes(1))
    expect(yield* waitOf(email(8), address)).toBe(0)
  })
}

describe("login throttle rules (TestClock)", () => {
  layer(throttleOver(LoginThrottleInProcess.layer))("in process", (it) => {
    for (const [name, rule] of Object.entries(rules)) it.effect(name, () => rule)
  })
  // The Redis connection is built on the real clock; each rule then runs on a TestClock.
  layer(throttleOver(LoginThrottleRedis.layer), { excludeTestServices: true })(
    "in Redis, shared by instances",
    (it) => {
      for (const [name, rule] of Object.entries(rules)) it.effect(name, () => Effect.provide(rule, TestClock.layer()))
    }
  )
})

describe("login throttle while Redis is unreachable", () => {
  // The throttle and the test share one connection, which the test then drops.
  const sharedConnection = LoginThrottle.layer.pipe(
    Layer.provide(LoginThrottleRedis.layer),
    Layer.provideMerge(RedisConnection.layer(Redacted.make(testRedisUrl))),
    Layer.provide(testConfig({ loginMaxFailures: 3, loginWindow: window, loginMaxPerAddress: 5 }))
  )
  layer(sharedConnection, { excludeTestServices: true })("in Redis", (it) => {
    it.effect("each instance counts on its own: sign-in stays available and guesses stay limited", () =>
      Effect.gen(function* () {
        const { command } = yield* RedisConnection
        // Commands now fail at once (no offline queue), as during an outage.
        command.disconnect()
        const email = `outage-${uniqueSuffix()}@example.com`
        for (const n of [1, 2, 3]) expect(yield* waitOf(email, `10.1.0.${n}`)).toBe(0)
        expect(yield* waitOf(email, "10.1.0.4")).toBe(windowMs / 1000)
      }).pipe(Effect.provide(TestClock.layer()))
    )
  })
})

/** The 429 as the HTTP API answers it. */
const expectThrottled = (response: TestResponse) => {
  expect(response.status).toBe(429)
  expect(response.body).toEqual({
    _tag: "TooManyRequests",
    message: "too many sign-in attempts: wait before trying again",
    retryAfter: expect.any(Number),
    requestId: expect.any(String)
  })
  const retryAfter = (response.body as { retryAfter: number }).retryAfter
  expect(response.headers.get("retry-after")).toBe(String(retryAfter))
  expect(response.headers.get("set-cookie")).toBeNull()
  return retryAfter
}

describe("POST /api/auth/login, throttled", () => {
  it.live(
    "a known and an unknown email are refused alike (429 with Retry-After) after LOGIN_MAX_FAILURES, even with the right password",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const user = yield* freshUser({ workspace })
        const login = (email: string, password: string) =>
          signInAt(base, { workspace: workspace.slug, email, password })
        const unknown = `nobody-${uniqueSuffix()}@example.com`
        for (const email of [user.email, unknown]) {
          for (const _ of [1, 2]) expect((yield* login(email, "wrong password")).status).toBe(401)
        }
        const known = expectThrottled(yield* login(user.email, testPassword))
        const other = expectThrottled(yield* login(unknown, testPassword))
        for (const retryAfter of [known, other]) {
          expect(retryAfter).toBeGreaterThan(windowMs / 1000 - 60)
          expect(retryAfter).toBeLessThanOrEqual(windowMs / 1000)
        }
      }).pipe(Effect.scoped, Effect.provide(testApp({ loginMaxFailures: 2, loginWindow: window })))
  )

  it.live("the right password works again once the window has passed, and a success forgets the failures", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace })
      const login = (password: string) => signInAt(base, { workspace: workspace.slug, email: user.email, password })
      for (const _ of [1, 2]) expect((yield* login("wrong password")).status).toBe(401)
      expectThrottled(yield* login(testPassword))
      // Waits on the condition, not a duration: refused attempts count nothing, so the first one past the window passes.
      yield* eventually(
        "the right password works after the window",
        Effect.map(login(testPassword), (r) => r.status === 200)
      )
      // The success forgot the failures: two wrong ones in a row are 401s again, not 429s.
      for (const _ of [1, 2]) expect((yield* login("wrong password")).status).toBe(401)
    }).pipe(
      Effect.scoped,
      Effect.provide(testApp({ loginMaxFailures: 2, loginWindow: Duration.millis(500), loginMaxPerAddress: 10_000 }))
    )
  )

  it.live("per client address: the socket's, or X-Forwarded-For's last entry only with TRUST_PROXY", () =>
    Effect.gen(function* () {
      const direct = yield* Effect.gen(function* () {
        const base = yield* baseUrl
        const guess = (forwardedFor: string) =>
          signInAt(
            base,
            { workspace: "nowhere", email: `guess-${uniqueSuffix()}@example.com`, password: "x" },
            { "x-forwarded-for": forwardedFor }
          )
        // Without TRUST_PROXY a forged header changes nothing: every guess comes from 127.0.0.1.
        for (const n of [1, 2, 3]) expect((yield* guess(`203.0.113.${n}`)).status).toBe(401)
        return yield* guess("203.0.113.4")
      }).pipe(Effect.scoped, Effect.provide(testApp({ loginMaxPerAddress: 3 })))
      expectThrottled(direct)

      yield* Effect.gen(function* () {
        const base = yield* baseUrl
        const guess = (forwardedFor: string) =>
          signInAt(
            base,
            { workspace: "nowhere", email: `guess-${uniqueSuffix()}@example.com`, password: "x" },
            { "x-forwarded-for": forwardedFor }
          )
        // What the client itself sent first varies; the entry the proxy appended is the address.
        for (const n of [1, 2, 3]) expect((yield* guess(`203.0.113.${n}, 198.51.100.9`)).status).toBe(401)
        expectThrottled(yield* guess("203.0.113.4, 198.51.100.9"))
        // Another proxied client is another address.
        expect((yield* guess("198.51.100.9, 198.51.100.10")).status).toBe(401)
      }).pipe(Effect.scoped, Effect.provide(testApp({ loginMaxPerAddress: 3, trustProxy: true })))
    })
  )
})

// ---------------------------------------------------------------------------

/** How often sign-in looked an email up (the password hash always follows the lookup). */
const lookups = Ref.makeUnsafe(0)

const CountingUsers = Layer.effect(
  Users,
  Effect.gen(function* () {
    const real = yield* Users
    return Users.of({
      ...real,
      findCredentials: (email) =>
        Effect.andThen(
          Ref.update(lookups, (n) => n + 1),
          real.findCredentials(email)
        )
    })
  })
).pipe(Layer.provide(Users.layer))

const AuthenticationCountingLookups = Authentication.layerWithoutDependencies.pipe(
  Layer.provide(
    Layer.mergeAll(
      CountingUsers,
      Sessions.layer,
      Memberships.layer,
      ApiKeys.layer,
      Workspaces.layer,
      LoginThrottle.layer
    )
  ),
  Layer.provideMerge(testServices({ loginMaxFailures: 1 }))
)

layer(AuthenticationCountingLookups, { excludeTestServices: true })("a throttled sign-in", (it) => {
  it.effect("looks nothing up and hashes nothing: the throttle answers before either", () =>
    Effect.gen(function* () {
      const authentication = yield* Authentication
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace })
      const signIn = (password: string) =>
        authentication.signIn({
          workspace: workspace.slug,
          email: user.email,
          password: Redacted.make(password),
          address: "192.0.2.1"
        })
      expect((yield* Effect.flip(signIn("wrong password")))._tag).toBe("Unauthorized")
      const before = yield* Ref.get(lookups)
      const refused = yield* Effect.flip(signIn(testPassword))
      expect(refused).toBeInstanceOf(TooManyRequests)
      expect(yield* Ref.get(lookups)).toBe(before)
    }).pipe(Effect.scoped)
  )
})
