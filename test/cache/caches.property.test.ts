import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Effect, Layer, Ref, Schema } from "effect"
import type { BroadcastStatus } from "../../src/api/BroadcastStatus"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import * as BroadcastBusInProcess from "../../src/broadcast/BroadcastBusInProcess"
import { inProcessStatus } from "../../src/broadcast/BroadcastStatus"
import { Caches } from "../../src/cache/Caches"
import { cacheTag } from "../../src/cache/cacheTags"
import { AppConfig } from "../../src/config/AppConfig"

/** Six sessions of three users. */
const sessions = ["s0", "s1", "s2", "s3", "s4", "s5"] as const
const userOf = (session: string) => `u${Number(session.slice(1)) % 3}`

type Op =
  | { readonly kind: "get"; readonly session: string }
  | { readonly kind: "change session"; readonly session: string }
  | { readonly kind: "change user"; readonly user: string }
  | { readonly kind: "lose subscription" }
  | { readonly kind: "regain subscription" }

/** Weighted: 4 gets, 2 session changes, 1 user change, 1 loss, 1 regain in 9. */
const op: Arbitrary.Arbitrary<Op> = Arbitrary.all({
  draw: Arbitrary.schema(Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 8 }))),
  session: Arbitrary.schema(Schema.Literals(sessions)),
  user: Arbitrary.schema(Schema.Literals(["u0", "u1", "u2"]))
}).pipe(
  Arbitrary.map(({ draw, session, user }): Op => {
    if (draw < 4) return { kind: "get", session }
    if (draw < 6) return { kind: "change session", session }
    if (draw < 7) return { kind: "change user", user }
    return draw < 8 ? { kind: "lose subscription" } : { kind: "regain subscription" }
  })
)

/**
 * Instance B's cache, against changes another instance makes and announces
 * over the bus (lost while B's subscription is down): every read B answers
 * is the database's current value.
 */
const run = (ops: ReadonlyArray<Op>) =>
  Effect.gen(function* () {
    const status = yield* Ref.make<BroadcastStatus>(inProcessStatus)
    const bus = Layer.effect(
      BroadcastBus,
      Effect.map(BroadcastBus, (real) => BroadcastBus.of({ ...real, status: Ref.get(status) }))
    ).pipe(Layer.provide(BroadcastBusInProcess.layer))
    return yield* Effect.gen(function* () {
      const database = new Map<string, number>(sessions.map((session) => [session, 0]))
      const caches = yield* Caches
      const others = yield* BroadcastBus
      const cache = yield* caches.make({
        lookup: (session: string) => Effect.sync(() => database.get(session) ?? -1),
        tags: (session: string) => [cacheTag.session(session), cacheTag.user(userOf(session))]
      })
      const announce = (invalidation: Parameters<typeof others.invalidate>[0]) =>
        Effect.flatMap(Ref.get(status), (now) =>
          now.subscribed ? Effect.orDie(others.invalidate(invalidation)) : Effect.void
        )
      for (const step of ops) {
        switch (step.kind) {
          case "get":
            expect(yield* cache.get(step.session), step.session).toBe(database.get(step.session))
            break
          case "change session":
            database.set(step.session, (database.get(step.session) ?? 0) + 1)
            yield* announce({ _tag: "Session", tokenHash: step.session })
            break
          case "change user":
            for (const session of sessions.filter((s) => userOf(s) === step.user))
              database.set(session, (database.get(session) ?? 0) + 1)
            yield* announce({ _tag: "User", userId: step.user })
            break
          case "lose subscription":
            yield* Ref.update(status, (now) =>
              now.subscribed ? { ...now, subscribed: false, outages: now.outages + 1, lostSince: "now" } : now
            )
            break
          case "regain subscription":
            yield* Ref.update(status, (now) => ({ ...now, subscribed: true, lostSince: null }))
            break
        }
      }
    }).pipe(Effect.provide(Caches.layer.pipe(Layer.provideMerge(bus), Layer.provide(AppConfig.make()))))
  }).pipe(Effect.scoped)

describe("Caches, property", () => {
  it.live.prop(
    "whatever the order of reads, changes, invalidations and outages, a read answers the current value",
    [Arbitrary.array(op, { maxLength: 60 })],
    ([ops]) => run(ops),
    { arbitrary: { runs: 200 } }
  )
})
