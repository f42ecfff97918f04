import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Layer, Ref } from "effect"
import type { BroadcastStatus } from "../../src/api/BroadcastStatus"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import * as BroadcastBusInProcess from "../../src/broadcast/BroadcastBusInProcess"
import { inProcessStatus } from "../../src/broadcast/BroadcastStatus"
import { Caches } from "../../src/cache/Caches"
import { cacheTag } from "../../src/cache/CacheInvalidation"
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

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...sessions).map((session): Op => ({ kind: "get", session })) },
  { weight: 2, arbitrary: fc.constantFrom(...sessions).map((session): Op => ({ kind: "change session", session })) },
  { weight: 1, arbitrary: fc.constantFrom("u0", "u1", "u2").map((user): Op => ({ kind: "change user", user })) },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: "lose subscription" }) },
  { weight: 1, arbitrary: fc.constant<Op>({ kind: "regain subscription" }) }
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
  it("whatever the order of reads, changes, invalidations and outages, a read answers the current value", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), (ops) => Effect.runPromise(run(ops))),
      { numRuns: 200 }
    )
  })
})
