import { randomUUID } from "node:crypto"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { PresenceEditor, PresenceRecordKey } from "../../src/presence/PresenceStore"
import { PresenceStore } from "../../src/presence/PresenceStore"
import * as PresenceStoreInProcess from "../../src/presence/PresenceStoreInProcess"
import * as PresenceStoreRedis from "../../src/presence/PresenceStoreRedis"
import { RedisConnection } from "../../src/redis/RedisConnection"

const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379"
const lapse = 30_000
const t0 = Date.now()
const deal = "crm/deal"
const contact = "crm/contact"

const alice = (editorId: string): PresenceEditor => ({ editorId, userId: "alice", name: "Alice" })
const bob = (editorId: string): PresenceEditor => ({ editorId, userId: "bob", name: "Bob" })
const sorted = <A extends { readonly editorId: string }>(xs: ReadonlyArray<A>) =>
  [...xs].sort((a, b) => a.editorId.localeCompare(b.editorId))

/** The same cases against every implementation; `cleanup` removes what a workspace left behind. */
const presenceSuite = <R>(
  name: string,
  store: Layer.Layer<PresenceStore | R, unknown>,
  cleanup: (workspace: string) => Effect.Effect<void, never, R>
) =>
  layer(store, { excludeTestServices: true })(name, (it) => {
    /** Runs `f` with fresh workspace ids (tenants of this test only), cleaning up afterwards. */
    const inWorkspaces = <A, E>(f: (ws: string, other: string) => Effect.Effect<A, E, PresenceStore | R>) => {
      const ws = `test-${randomUUID()}`
      const other = `test-${randomUUID()}`
      return f(ws, other).pipe(Effect.ensuring(Effect.andThen(cleanup(ws), cleanup(other))))
    }
    const record = (workspace: string, recordId: string, businessObject = deal): PresenceRecordKey => ({
      workspace,
      businessObject,
      recordId
    })

    it.effect("arrive, renew silently, leave", () =>
      inWorkspaces((ws) =>
        Effect.gen(function* () {
          const store = yield* PresenceStore
          const r1 = record(ws, "r1")
          expect(yield* store.touch(r1, alice("e1"), t0, t0 + lapse)).toBe("arrived")
          expect(yield* store.list(ws, deal, t0)).toEqual([
            { recordId: "r1", editorId: "e1", userId: "alice", name: "Alice" }
          ])
          expect(yield* store.touch(r1, alice("e1"), t0 + 10_000, t0 + 10_000 + lapse)).toBe("renewed")
          expect(yield* store.list(ws, deal, t0 + 10_000)).toHaveLength(1)
          // The renewal moved the lapse time: still live after the first one would have lapsed.
          expect(yield* store.list(ws, deal, t0 + lapse + 1)).toHaveLength(1)
          expect(yield* store.leave(r1, "e1", "alice", t0 + 20_000)).toBe("left")
          expect(yield* store.list(ws, deal, t0 + 20_000)).toEqual([])
          expect(yield* store.leave(r1, "e1", "alice", t0 + 20_000)).toBe("absent")
        })
      )
    )

    it.effect("an editor id held by another user can be neither renewed nor removed", () =>
      inWorkspaces((ws) =>
        Effect.gen(function* () {
          const store = yield* PresenceStore
          const r1 = record(ws, "r1")
          expect(yield* store.touch(r1, alice("e1"), t0, t0 + lapse)).toBe("arrived")
          expect(yield* store.touch(r1, bob("e1"), t0 + 1, t0 + 1 + lapse)).toBe("held-by-other")
          expect(yield* store.leave(r1, "e1", "bob", t0 + 2)).toBe("held-by-other")
          expect(yield* store.list(ws, deal, t0 + 3)).toEqual([
            { recordId: "r1", editorId: "e1", userId: "alice", name: "Alice" }
          ])
          // Bob's refused heartbeat did not move Alice's lapse time.
          expect(yield* store.list(ws, deal, t0 + lapse)).toEqual([])
        })
      )
    )

    it.effect("a lapsed editor is absent: listed no more, arrives again, cannot leave", () =>
      inWorkspaces((ws) =>
        Effect.gen(function* () {
          const store = yield* PresenceStore
          const r1 = record(ws, "r1")
          expect(yield* store.touch(r1, alice("e1"), t0, t0 + lapse)).toBe("arrived")
          expect(yield* store.touch(r1, alice("e2"), t0, t0 + lapse)).toBe("arrived")
          expect(yield* store.list(ws, deal, t0 + lapse - 1)).toHaveLength(2)
          expect(yield* store.list(ws, deal, t0 + lapse)).toEqual([])
          expect(yield* store.touch(r1, alice("e1"), t0 + lapse, t0 + 2 * lapse)).toBe("arrived")
          expect(yield* store.leave(r1, "e2", "alice", t0 + lapse)).toBe("absent")
          // Once lapsed, the id is free: another user may take it.
          expect(yield* store.touch(r1, bob("e1"), t0 + 2 * lapse, t0 + 3 * lapse)).toBe("arrived")
          expect(yield* store.list(ws, deal, t0 + 2 * lapse)).toEqual([
            { recordId: "r1", editorId: "e1", userId: "bob", name: "Bob" }
          ])
        })
      )
    )

    it.effect("list covers every record of one business object of one workspace", () =>
      inWorkspaces((ws, other) =>
        Effect.gen(function* () {
          const store = yield* PresenceStore
          yield* store.touch(record(ws, "r1"), alice("e1"), t0, t0 + lapse)
          yield* store.touch(record(ws, "r1"), bob("e2"), t0, t0 + lapse)
          yield* store.touch(record(ws, "r2"), alice("e3"), t0, t0 + lapse)
          yield* store.touch(record(other, "r1"), alice("e4"), t0, t0 + lapse)
          yield* store.touch(record(ws, "r1", contact), alice("e5"), t0, t0 + lapse)
          expect(sorted(yield* store.list(ws, deal, t0))).toEqual([
            { recordId: "r1", editorId: "e1", userId: "alice", name: "Alice" },
            { recordId: "r1", editorId: "e2", userId: "bob", name: "Bob" },
            { recordId: "r2", editorId: "e3", userId: "alice", name: "Alice" }
          ])
          expect(yield* store.list(other, deal, t0)).toEqual([
            { recordId: "r1", editorId: "e4", userId: "alice", name: "Alice" }
          ])
          expect(yield* store.list(ws, contact, t0)).toEqual([
            { recordId: "r1", editorId: "e5", userId: "alice", name: "Alice" }
          ])
          // One editor id on two records is two editors.
          expect(yield* store.touch(record(ws, "r2"), bob("e1"), t0, t0 + lapse)).toBe("arrived")
        })
      )
    )

    it.effect("concurrent heartbeats of one new editor give exactly one arrival", () =>
      inWorkspaces((ws) =>
        Effect.gen(function* () {
          const store = yield* PresenceStore
          const r1 = record(ws, "r1")
          const outcomes = yield* Effect.all(
            Array.from({ length: 20 }, (_, i) => store.touch(r1, alice("e1"), t0 + i, t0 + i + lapse)),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter((o) => o === "arrived")).toHaveLength(1)
          expect(outcomes.filter((o) => o === "renewed")).toHaveLength(19)
        })
      )
    )

    it.effect("touchAll: several heartbeats in one call, applied in order, one outcome each", () =>
      inWorkspaces((ws) =>
        Effect.gen(function* () {
          const store = yield* PresenceStore
          expect(yield* store.touch(record(ws, "r0"), bob("held"), t0, t0 + lapse)).toBe("arrived")
          expect(yield* store.touch(record(ws, "r9"), alice("old"), t0, t0 + 100)).toBe("arrived")
          const at = t0 + 1_000
          const touch = (recordId: string, editor: PresenceEditor) => ({
            recordId,
            editor,
            nowMs: at,
            lapseAtMs: at + lapse
          })
          const outcomes = yield* store.touchAll(ws, deal, [
            touch("r1", alice("e1")),
            touch("r1", alice("e1")),
            touch("r2", alice("e2")),
            touch("r0", alice("held")),
            touch("r9", alice("old"))
          ])
          // The same editor twice: one arrival; another user's id: refused; a lapsed one ("old"): an arrival again.
          expect(outcomes).toEqual(["arrived", "renewed", "arrived", "held-by-other", "arrived"])
          expect(sorted(yield* store.list(ws, deal, at))).toEqual(
            [
              { recordId: "r1", editorId: "e1", userId: "alice", name: "Alice" },
              { recordId: "r2", editorId: "e2", userId: "alice", name: "Alice" },
              { recordId: "r0", editorId: "held", userId: "bob", name: "Bob" },
              { recordId: "r9", editorId: "old", userId: "alice", name: "Alice" }
            ].sort((a, b) => a.editorId.localeCompare(b.editorId))
          )
          expect(yield* store.touchAll(ws, deal, [])).toEqual([])
          expect(yield* store.touchAll(ws, deal, [touch("r1", alice("e1"))])).toEqual(["renewed"])
        })
      )
    )

    it.effect("concurrent heartbeats of two users on one new editor id: one wins", () =>
      inWorkspaces((ws) =>
        Effect.gen(function* () {
          const store = yield* PresenceStore
          const r1 = record(ws, "r1")
          const outcomes = yield* Effect.all(
            Array.from({ length: 20 }, (_, i) =>
              store.touch(r1, i % 2 === 0 ? alice("e1") : bob("e1"), t0, t0 + lapse)
            ),
            { concurrency: "unbounded" }
          )
          expect(outcomes.filter((o) => o === "arrived")).toHaveLength(1)
          expect(outcomes.filter((o) => o === "held-by-other")).toHaveLength(10)
          expect(yield* store.list(ws, deal, t0)).toHaveLength(1)
        })
      )
    )
  })

presenceSuite("PresenceStore (in-process)", PresenceStoreInProcess.layer, () => Effect.void)

const redisStore = PresenceStoreRedis.layer.pipe(Layer.provideMerge(RedisConnection.layer(redisUrl)))

/** Deletes the presence keys of every business object the cases use. */
const deleteWorkspaceKeys = (workspace: string) =>
  Effect.gen(function* () {
    const { command, prefix } = yield* RedisConnection
    const keys = [deal, contact].flatMap((bo) => Object.values(PresenceStoreRedis.presenceKeys(prefix, workspace, bo)))
    yield* Effect.promise(() => command.del(...keys))
  })

presenceSuite("PresenceStore (redis)", redisStore, deleteWorkspaceKeys)

describe("PresenceStore (redis) keys", () => {
  it.live("are per workspace and business object, expire after the latest lapse time, vanish when empty", () =>
    Effect.gen(function* () {
      const store = yield* PresenceStore
      const { command, prefix } = yield* RedisConnection
      const ws = `test-${randomUUID()}`
      const keys = PresenceStoreRedis.presenceKeys(prefix, ws, deal)
      yield* store.touch({ workspace: ws, businessObject: deal, recordId: "r1" }, alice("e1"), t0, t0 + lapse)
      yield* store.touch({ workspace: ws, businessObject: deal, recordId: "r2" }, alice("e2"), t0, t0 + 2 * lapse)
      for (const key of [keys.lapse, keys.holder]) {
        const ttl = yield* Effect.promise(() => command.pttl(key))
        expect(ttl).toBeGreaterThan(lapse)
        expect(ttl).toBeLessThanOrEqual(2 * lapse)
      }
      yield* store.leave({ workspace: ws, businessObject: deal, recordId: "r1" }, "e1", "alice", t0)
      yield* store.leave({ workspace: ws, businessObject: deal, recordId: "r2" }, "e2", "alice", t0)
      expect(yield* Effect.promise(() => command.exists(keys.lapse, keys.holder))).toBe(0)
    }).pipe(Effect.provide(redisStore), Effect.orDie)
  )
})
