import { randomUUID } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer, Option } from "effect"
import * as LoginThrottleRedis from "../../src/auth/LoginThrottleRedis"
import { LoginThrottleStore } from "../../src/auth/LoginThrottleStore"
import { AppConfig } from "../../src/config/AppConfig"
import { PresenceStore } from "../../src/presence/PresenceStore"
import * as PresenceStoreRedis from "../../src/presence/PresenceStoreRedis"
import { presenceKeys } from "../../src/presence/PresenceStoreRedis"
import { keySlot } from "../../src/redis/keySlot"
import { RedisConnection } from "../../src/redis/RedisConnection"
import type { ClusterMember, OwnRedisCluster } from "../support/ownRedisCluster"
import { clusterNodesOf, ownRedisCluster } from "../support/ownRedisCluster"
import { testConfig, uniqueSuffix } from "../support/TestApp"

const deal = "crm/deal"
const policy = { maxFailures: 2, windowMs: 60_000, maxLockMs: 600_000 }
const t0 = Date.now()
const lapse = 30_000

const serves = (master: ClusterMember, slot: number) => master.slots.some(([from, to]) => slot >= from && slot <= to)

/** The first `make(n)` whose key `keyOf` falls in a slot `master` serves. */
const servedBy = <A>(master: ClusterMember, make: (n: number) => A, keyOf: (a: A) => string): A => {
  for (let n = 0; ; n++) {
    const candidate = make(n)
    if (serves(master, keySlot(keyOf(candidate)))) return candidate
  }
}

/** `INFO commandstats` of one node: calls per command. */
const calls = (cluster: OwnRedisCluster, port: number) =>
  Effect.map(cluster.cli(port, "info", "commandstats"), (text) => {
    const count = (command: string) => Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(text)?.[1] ?? 0)
    return { evalsha: count("evalsha"), eval: count("eval") }
  })

/** Forgets every script `port` knows and its command counts: the next script call there is a first one. */
const forgetScripts = (cluster: OwnRedisCluster, port: number) =>
  Effect.andThen(cluster.cli(port, "script", "flush"), cluster.cli(port, "config", "resetstat"))

describe("presence and the login throttle on a Redis Cluster", () => {
  it.live(
    "every operation runs on every master: one business object's keys in one slot, no CROSSSLOT, EVAL once after NOSCRIPT",
    () =>
      Effect.gen(function* () {
        const cluster = yield* ownRedisCluster
        const nodes = clusterNodesOf(cluster)
        const prefix = `t${uniqueSuffix()}:`
        const context = yield* Layer.build(
          Layer.mergeAll(PresenceStoreRedis.layer, LoginThrottleRedis.layer).pipe(
            Layer.provideMerge(RedisConnection.layerCluster(nodes, { prefix })),
            Layer.provideMerge(testConfig({ redisUrl: Option.none(), redisClusterNodes: Option.some(nodes) }))
          )
        )
        const presence = Context.get(context, PresenceStore)
        const throttle = Context.get(context, LoginThrottleStore)
        const { queuePrefix } = Context.get(context, AppConfig)
        const throttleKey = (key: string) => `${prefix}login-throttle:${queuePrefix}:${key}`

        const masters = (yield* cluster.members).filter((m) => m.role === "master" && !m.failed && m.slots.length > 0)
        expect(masters).toHaveLength(3)
        for (const master of masters) {
          const workspace = servedBy(
            master,
            () => `test-${randomUUID()}`,
            (ws) => presenceKeys(prefix, ws, deal).lapse
          )
          const keys = presenceKeys(prefix, workspace, deal)
          const slot = keySlot(keys.lapse)
          // The hash tag: both keys in one slot, as the server itself computes it.
          expect([yield* cluster.keySlot(keys.lapse), yield* cluster.keySlot(keys.holder)]).toEqual([slot, slot])

          yield* forgetScripts(cluster, master.port)
          const record = (recordId: string) => ({ workspace, businessObject: deal, recordId })
          const alice = { editorId: "e1", userId: "alice", name: "Alice" }
          const bob = { editorId: "e2", userId: "bob", name: "Bob" }
          expect(yield* presence.touch(record("r1"), alice, t0, t0 + lapse)).toBe("arrived")
          expect(
            yield* presence.touchAll(workspace, deal, [
              { recordId: "r2", editor: bob, nowMs: t0 + 1, lapseAtMs: t0 + 1 + lapse },
              { recordId: "r1", editor: alice, nowMs: t0 + 1, lapseAtMs: t0 + 1 + lapse }
            ])
          ).toEqual(["arrived", "renewed"])
          expect((yield* presence.list(workspace, deal, t0 + 2)).map((e) => e.editorId).sort()).toEqual(["e1", "e2"])
          // Every key of the business object is on this master, in the one slot.
          expect(yield* cluster.cli(master.port, "cluster", "countkeysinslot", String(slot))).toBe("2")
          expect(yield* cluster.cli(master.port, "exists", keys.lapse, keys.holder)).toBe("2")
          expect(yield* presence.leave(record("r2"), "e2", "bob", t0 + 3)).toBe("left")
          expect(yield* presence.leave(record("r1"), "e1", "alice", t0 + 3)).toBe("left")
          // Four scripts, each sent whole once: EVALSHA answered NOSCRIPT, then EVAL.
          expect(yield* calls(cluster, master.port)).toEqual({ evalsha: 5, eval: 4 })
          expect(yield* presence.list(workspace, deal, t0 + 4)).toEqual([])
          expect(yield* calls(cluster, master.port)).toEqual({ evalsha: 6, eval: 4 })

          const account = servedBy(
            master,
            (n) => `account:someone-${n}@example.com`,
            (key) => throttleKey(key)
          )
          expect(yield* throttle.attempt(account, t0, policy)).toBe(0)
          expect(yield* throttle.attempt(account, t0 + 1, policy)).toBe(0)
          expect(yield* throttle.attempt(account, t0 + 2, policy)).toBeGreaterThan(0)
          // Counted in the cluster, on this master (not on the instance, as it would be had Redis refused).
          expect(yield* cluster.cli(master.port, "hget", throttleKey(account), "failures")).toBe("2")
          yield* throttle.forgiveOne(account, policy)
          expect(yield* cluster.cli(master.port, "hget", throttleKey(account), "failures")).toBe("1")
          yield* throttle.clear(account)
          expect(yield* cluster.cli(master.port, "exists", throttleKey(account))).toBe("0")
          expect(yield* calls(cluster, master.port)).toEqual({ evalsha: 10, eval: 6 })
        }
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})
