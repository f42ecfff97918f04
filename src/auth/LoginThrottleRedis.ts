import { Effect, Layer } from "effect"
import type { RedisClient } from "../redis/clientLifecycle"
import { AppConfig } from "../config/AppConfig"
import { luaScript } from "../redis/luaScript"
import { RedisConnection } from "../redis/RedisConnection"
import { makeInProcess } from "./LoginThrottleInProcess"
import { LoginThrottleStore } from "./LoginThrottleStore"
import type { ThrottlePolicy } from "./ThrottleCounter"

// ThrottleCounter.attempt in Lua. KEYS[1]: HASH {failures, until, reset}.
// ARGV: now, maxFailures, windowMs, maxLockMs. Returns the wait in ms (0: go).
const attemptScript = `
local now = tonumber(ARGV[1])
local max = tonumber(ARGV[2])
local window = tonumber(ARGV[3])
local maxLock = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'failures', 'until', 'reset')
local failures = tonumber(state[1]) or 0
local lockedUntil = tonumber(state[2]) or 0
local resetAt = tonumber(state[3]) or 0
if lockedUntil > now then return lockedUntil - now end
if resetAt <= now then failures = 0 end
failures = failures + 1
lockedUntil = 0
if failures == 1 then resetAt = now + window end
if failures >= max then
  lockedUntil = now + math.min(window * 2 ^ math.min(failures - max, 30), maxLock)
  resetAt = lockedUntil + window
end
redis.call('HSET', KEYS[1], 'failures', failures, 'until', lockedUntil, 'reset', resetAt)
redis.call('PEXPIRE', KEYS[1], math.max(resetAt - now, 1))
return 0
`

// ThrottleCounter.forgiveOne. ARGV: maxFailures.
const forgiveScript = `
local failures = (tonumber(redis.call('HGET', KEYS[1], 'failures')) or 0) - 1
if failures <= 0 then
  redis.call('DEL', KEYS[1])
elseif failures < tonumber(ARGV[1]) then
  redis.call('HSET', KEYS[1], 'failures', failures, 'until', 0)
else
  redis.call('HSET', KEYS[1], 'failures', failures)
end
return 0
`

const script = (source: string) => {
  const run = luaScript(source)
  return (client: RedisClient, key: string, args: ReadonlyArray<string | number>) =>
    Effect.tryPromise(() => run(client, [key], args))
}

const attempt = script(attemptScript)
const forgive = script(forgiveScript)

const policyArgs = (policy: ThrottlePolicy) => [policy.maxFailures, policy.windowMs, policy.maxLockMs] as const

/**
 * The counters in Redis, shared by every instance: one hash per key, each
 * operation one Lua script, gone once forgotten. Keys start with the
 * deployment's `REDIS_PREFIX` and are named by `QUEUE_PREFIX` too, like the
 * deployment's queues, so deployments (and test runs) sharing a Redis keep
 * their own counts. While Redis cannot be
 * reached, each instance counts on its own (logged): sign-in stays up and
 * guesses stay limited, per instance.
 */
const make = Effect.gen(function* () {
  const { command, prefix } = yield* RedisConnection
  const config = yield* AppConfig
  const local = makeInProcess()
  const keyOf = (key: string) => `${prefix}login-throttle:${config.queuePrefix}:${key}`
  const orLocally =
    <A>(fallback: Effect.Effect<A>) =>
    (error: unknown) =>
      Effect.andThen(
        Effect.logWarning(
          `login throttle: redis unreachable, counting on this instance (${error instanceof Error ? error.message : String(error)})`
        ),
        fallback
      )

  return LoginThrottleStore.of({
    attempt: (key, nowMs, policy) =>
      attempt(command, keyOf(key), [nowMs, ...policyArgs(policy)]).pipe(
        Effect.map((reply) => (typeof reply === "number" ? reply : 0)),
        Effect.catch(orLocally(local.attempt(key, nowMs, policy)))
      ),
    forgiveOne: (key, policy) =>
      forgive(command, keyOf(key), [policy.maxFailures]).pipe(
        Effect.asVoid,
        Effect.catch(orLocally(local.forgiveOne(key, policy)))
      ),
    clear: (key) =>
      Effect.tryPromise(() => command.del(keyOf(key))).pipe(Effect.asVoid, Effect.catch(orLocally(local.clear(key)))),
    kind: "redis"
  })
})

export const layer: Layer.Layer<LoginThrottleStore, never, RedisConnection | AppConfig> = Layer.effect(
  LoginThrottleStore,
  make
)
