import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { AppConfig } from "../../src/config/AppConfig"
import { queueTable } from "../../src/tenancy/migrations/durableQueue"
import { platformSchema } from "../../src/tenancy/migrations/platform"
import type { Workspace } from "../../src/api/Workspace"
import { PrunerLive } from "../../src/workers/Pruner"
import { pruneOnce } from "../../src/workers/pruning"
import { eventually } from "../broadcast/streamHelpers"
import { freshUser, freshWorkspace, TestServices, uniqueSuffix } from "../support/TestApp"

const sessions = `${platformSchema}.sessions`

/** `count` sessions of the user, expired a minute ago (or valid for an hour). */
const addSessions = (userId: string, workspaceId: string, count: number, expired: boolean) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql`INSERT INTO ${sql(sessions)} (token_hash, user_id, workspace_id, expires_at)
      SELECT md5(${randomBytes(8).toString("hex")}::text || i::text), ${userId}, ${workspaceId},
        now() + make_interval(mins => ${expired ? -1 : 60}::int)
      FROM generate_series(1, ${count}::int) AS i`
  ).pipe(Effect.orDie)

const sessionCounts = (userId: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) =>
      sql<{ readonly expired: number; readonly live: number }>`SELECT
        count(*) FILTER (WHERE expires_at <= now())::int AS expired,
        count(*) FILTER (WHERE expires_at > now())::int AS live
      FROM ${sql(sessions)} WHERE user_id = ${userId}`
  ).pipe(
    Effect.map((rows) => rows[0] ?? { expired: -1, live: -1 }),
    Effect.orDie
  )

/** A completed-run marker `ageDays` old; with a queue element of its id when `element` says so. */
const addMarker = (workspace: Workspace, queue: string, ageDays: number, element: "none" | "completed" | "pending") =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const id = crypto.randomUUID()
    yield* sql`INSERT INTO ${sql(workspace.table("completed_runs"))} (id, kind, name, completed_at)
      VALUES (${id}, 'job', 'test/pruned', now() - make_interval(days => ${ageDays}))`
    if (element !== "none") {
      yield* sql`INSERT INTO ${sql(queueTable)} (id, queue_name, element, state, attempts, visible_at, created_at, updated_at)
        VALUES (${id}, ${queue}, '{}', ${element === "completed" ? "completed" : "pending"}, 1, now(), now(), now())`
    }
    return id
  }).pipe(Effect.orDie)

const markerIds = (workspace: Workspace) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ readonly id: string }>`SELECT id::text AS id FROM ${sql(workspace.table("completed_runs"))}`
  ).pipe(
    Effect.map((rows) => new Set(rows.map((row) => row.id))),
    Effect.orDie
  )

/** A queue of this test's own (no worker takes from it), emptied when the scope closes. */
const ownQueue = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const queue = `prune-test-${uniqueSuffix()}:jobs`
  yield* Effect.addFinalizer(() => Effect.orDie(sql`DELETE FROM ${sql(queueTable)} WHERE queue_name = ${queue}`))
  return queue
})

layer(TestServices, { excludeTestServices: true })("pruning", (it) => {
  it.effect("the periodic pass removes expired sessions and old markers whose element can no longer come back", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace })
      const queue = yield* ownQueue
      yield* addSessions(user.id, workspace.id, 3, true)
      yield* addSessions(user.id, workspace.id, 1, false)
      const oldGone = yield* addMarker(workspace, queue, 8, "none")
      const oldDone = yield* addMarker(workspace, queue, 8, "completed")
      const oldPending = yield* addMarker(workspace, queue, 8, "pending")
      const young = yield* addMarker(workspace, queue, 1, "none")

      // The pruner as the server starts it, on a short interval.
      const config = yield* AppConfig
      yield* Layer.build(
        PrunerLive.pipe(Layer.provide(Layer.succeed(AppConfig, { ...config, pruneInterval: Duration.millis(50) })))
      )
      yield* eventually(
        "expired sessions and prunable markers are gone",
        Effect.zipWith(
          sessionCounts(user.id),
          markerIds(workspace),
          (counts, markers) => counts.expired === 0 && !markers.has(oldGone) && !markers.has(oldDone)
        )
      )
      expect(yield* sessionCounts(user.id)).toEqual({ expired: 0, live: 1 })
      const markers = yield* markerIds(workspace)
      // Its element may still be handed out again: the marker must stay, however old.
      expect(markers.has(oldPending)).toBe(true)
      expect(markers.has(young)).toBe(true)
      expect(markers.size).toBe(2)
    })
  )

  it.effect("a pass is bounded (batches of a size, a number of them); passes at once take different rows", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace })
      yield* addSessions(user.id, workspace.id, 25, true)
      yield* addSessions(user.id, workspace.id, 2, false)

      // At least 25 rows are due: a pass of two batches of 10 removes exactly 20.
      const first = yield* pruneOnce({ batchSize: 10, maxBatches: 2 })
      expect(first.sessions).toBe(20)
      expect((yield* sessionCounts(user.id)).expired).toBeLessThanOrEqual(25)

      yield* addSessions(user.id, workspace.id, 25, true)
      const due = (yield* sessionCounts(user.id)).expired
      const passes = yield* Effect.all(
        Array.from({ length: 3 }, () => pruneOnce({ batchSize: 4, maxBatches: 3 })),
        { concurrency: "unbounded" }
      )
      // Each pass stays within its bound. They never wait for each other's rows: a batch
      // comes back short only when no due row is left to take, so together they removed
      // all of the due rows or their whole capacity (3 passes x 3 batches x 4).
      for (const pass of passes) expect(pass.sessions).toBeLessThanOrEqual(12)
      expect(due).toBeGreaterThanOrEqual(25)
      expect(passes.reduce((sum, pass) => sum + pass.sessions, 0)).toBeGreaterThanOrEqual(Math.min(36, due))
      while ((yield* sessionCounts(user.id)).expired > 0) yield* pruneOnce({ batchSize: 100, maxBatches: 1 })
      expect(yield* sessionCounts(user.id)).toEqual({ expired: 0, live: 2 })
    })
  )
})
