import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Option, Redacted, Result } from "effect"
import { AppConfig, redisPrefixOf } from "../../src/config/AppConfig"
import { RedisConnection } from "../../src/redis/RedisConnection"
import { createRecord, signedInMember } from "../support/api"
import { request, sessionCookieOf } from "../support/http"
import { login } from "../support/login"
import { openSse } from "../support/sse"
import { baseUrl, freshWorkspace, testApp, testPassword, testRedisUrl, uniqueSuffix } from "../support/TestApp"
import { awaitHint, changed, opened } from "./streamHelpers"

const deal = "crm/deal"

describe("REDIS_PREFIX", () => {
  const read = (env: Record<string, string>) =>
    Effect.runSync(
      Effect.result(Effect.provide(AppConfig, AppConfig.layer)).pipe(
        // An empty variable is a value (refused), as in the process environment.
        Effect.provideService(
          ConfigProvider.ConfigProvider,
          ConfigProvider.fromEnvRecord(env, { preserveEmptyStrings: true })
        )
      )
    )

  it("defaults to abs:<database name>:, abs:embedded: without DATABASE_URL; REDIS_PREFIX wins", () => {
    const prefixOf = (env: Record<string, string>) => Result.map(read(env), redisPrefixOf)
    expect(prefixOf({ DATABASE_URL: "postgres://u:p@db.example:5432/orders_prod" })).toEqual(
      Result.succeed("abs:orders_prod:")
    )
    expect(prefixOf({ DATABASE_URL: "postgres://db.example/we%20ird%7Bname%7D" })).toEqual(
      Result.succeed("abs:we_ird_name_:")
    )
    expect(prefixOf({})).toEqual(Result.succeed("abs:embedded:"))
    expect(prefixOf({ DATABASE_URL: "postgres://db.example/orders", REDIS_PREFIX: "eu-1:" })).toEqual(
      Result.succeed("eu-1:")
    )
  })

  it("refuses a prefix with braces (they would move presence's cluster hash tag), spaces or nothing", () => {
    for (const bad of ["a{b}:", "two words", ""]) {
      const config = read({ REDIS_PREFIX: bad })
      expect(Result.isFailure(config), bad).toBe(true)
      if (Result.isFailure(config)) expect(String(config.failure)).toContain("REDIS_PREFIX")
    }
  })
})

/**
 * Two deployments on one Redis and, to make crossing as easy as possible, one
 * database and one queue prefix: only `REDIS_PREFIX` tells them apart. A user
 * of the same workspace is signed in on both.
 */
describe("two deployments on one Redis", () => {
  it.live("see neither each other's hints, nor presence, nor sign-in counts", () =>
    Effect.gen(function* () {
      const suffix = uniqueSuffix()
      const prefixes = [`test-a-${suffix}:`, `test-b-${suffix}:`] as const
      const deployment = (prefix: string) =>
        Layer.build(
          testApp({ redisPrefix: Option.some(prefix), queuePrefix: `test-${suffix}`, loginMaxFailures: 2 })
        ).pipe(Effect.map((context) => ({ context, base: Effect.runSync(Effect.provide(baseUrl, context)) })))
      const a = yield* deployment(prefixes[0])
      const b = yield* deployment(prefixes[1])

      // Whatever either left in Redis goes at the end.
      const redis = yield* Layer.build(RedisConnection.layer(Redacted.make(testRedisUrl)))
      const { command } = Context.get(redis, RedisConnection)
      yield* Effect.addFinalizer(() =>
        Effect.promise(async () => {
          for (const prefix of prefixes) {
            const keys = await command.keys(`${prefix}*`)
            if (keys.length > 0) await command.del(...keys)
          }
        })
      )

      const workspace = yield* Effect.provide(freshWorkspace, a.context)
      const onA = yield* Effect.provide(signedInMember(a.base, workspace), a.context)
      const cookieOnB = sessionCookieOf(
        yield* login(b.base, { workspace: workspace.slug, email: onA.user.email, password: testPassword })
      )

      // Each instance subscribes to its own channels only.
      for (const prefix of prefixes) {
        expect((yield* Effect.promise(() => command.pubsub("CHANNELS", `${prefix}*`))).sort()).toEqual([
          `${prefix}broadcast`,
          `${prefix}broadcast:caches`,
          `${prefix}broadcast:control`
        ])
      }

      // Hints: a save on A reaches A's stream; B's stream, on the same workspace, gets nothing.
      const streamA = yield* openSse(`${a.base}/api/broadcast`, { cookie: onA.cookie })
      const streamB = yield* openSse(`${b.base}/api/broadcast`, { cookie: cookieOnB })
      const first = yield* createRecord(onA.client, deal, { title: "Only on A" })
      expect(yield* awaitHint(streamA, first.id)).toEqual([opened, changed(deal, first.id)])
      // A save on B after it: B's stream shows it, and it alone.
      const second = yield* Effect.provide(
        Effect.flatMap(signedInMember(b.base, workspace), (onB) => createRecord(onB.client, deal, { title: "On B" })),
        b.context
      )
      expect(yield* awaitHint(streamB, second.id)).toEqual([opened, changed(deal, second.id)])

      // Presence: an editor on A is not seen through B.
      const path = `/api/presence/crm/deal`
      const heartbeat = yield* request(`${a.base}${path}/${first.id}/editor-a`, {
        method: "PUT",
        headers: { cookie: onA.cookie }
      })
      expect(heartbeat.status).toBe(204)
      expect((yield* request(`${a.base}${path}`, { headers: { cookie: onA.cookie } })).body).toEqual({
        records: { [first.id]: [{ id: "editor-a", name: onA.user.name, userId: onA.user.id }] }
      })
      expect((yield* request(`${b.base}${path}`, { headers: { cookie: cookieOnB } })).body).toEqual({ records: {} })

      // Sign-in counts: two failures lock the account on A, not on B.
      const wrong = { workspace: workspace.slug, email: onA.user.email, password: "wrong password" }
      expect((yield* login(a.base, wrong)).status).toBe(401)
      expect((yield* login(a.base, wrong)).status).toBe(401)
      expect((yield* login(a.base, wrong)).status).toBe(429)
      expect((yield* login(b.base, wrong)).status).toBe(401)
    })
  )
})
