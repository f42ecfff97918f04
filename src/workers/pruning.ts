import { SqlClient } from "effect/sql"
import type { Fragment, Identifier } from "effect/sql/Statement"
import { Duration, Effect } from "effect"
import { AppConfig } from "../config/AppConfig"
import { queueTable } from "../tenancy/migrations/durableQueue"
import { platformSchema } from "../tenancy/migrations/platform"
import { Workspaces } from "../tenancy/Workspaces"

export interface PruneLimits {
  /** Rows one DELETE removes at most. */
  readonly batchSize: number
  /** DELETEs per table and run at most: a run stays short however much is due; the next run goes on. */
  readonly maxBatches: number
}

export const defaultPruneLimits: PruneLimits = { batchSize: 1000, maxBatches: 5 }

export interface PruneReport {
  readonly sessions: number
  readonly completedRuns: number
  readonly idempotencyKeys: number
}

/** A prune waits this long at most for a lock: it is housekeeping and never holds up real work. */
const pruneLockTimeout = "1s"

/**
 * Deletes the rows `due` selects, a batch at a time, each batch in its own
 * short transaction. The batch is picked `FOR UPDATE SKIP LOCKED`, so
 * instances pruning at the same moment take different rows and never wait for
 * each other. Stops after `maxBatches` or at the first batch that is not full.
 */
const deleteInBatches = (table: Identifier, due: Fragment, limits: PruneLimits) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    let deleted = 0
    for (let batch = 0; batch < limits.maxBatches; batch++) {
      const rows = yield* sql.withTransaction(
        Effect.andThen(
          sql`SELECT set_config('lock_timeout', ${pruneLockTimeout}, true)`,
          sql`DELETE FROM ${table} WHERE ctid = ANY(ARRAY(
                SELECT ctid FROM ${table} AS due WHERE ${due} LIMIT ${limits.batchSize} FOR UPDATE SKIP LOCKED
              )) RETURNING 1 AS gone`
        )
      )
      deleted += rows.length
      if (rows.length < limits.batchSize) break
    }
    return deleted
  })

/** Sessions past their expiry: a signed-in request never finds them anyway. */
const pruneSessions = (limits: PruneLimits) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    deleteInBatches(sql(`${platformSchema}.sessions`), sql`due.expires_at <= now()`, limits)
  ).pipe(Effect.orDie)

/**
 * Completed-run markers older than the retention, and only those whose queue
 * element can no longer be handed out again: a marker keeps a redelivered
 * element from running twice, and the queue redelivers an element while it
 * is in the table not completed (lock expired, or a failed one given a fresh
 * set of attempts by `admin jobs retry`). So a marker goes only when its
 * element is completed or gone. Markers and elements share their id.
 */
const dueCompletedRuns = (sql: SqlClient.SqlClient, retentionSeconds: number) =>
  sql`due.completed_at < now() - make_interval(secs => ${retentionSeconds})
    AND NOT EXISTS (SELECT 1 FROM ${sql(queueTable)} AS q WHERE q.id = due.id::text AND q.state <> 'completed')`

/** Idempotency keys past `IDEMPOTENCY_KEY_TTL`: a retry can no longer use them (its next use reclaims one anyway). */
const dueIdempotencyKeys = (sql: SqlClient.SqlClient, ttlSeconds: number) =>
  sql`due.created_at < now() - make_interval(secs => ${ttlSeconds})`

/** Each workspace's completed-run markers and idempotency keys that are due. */
const pruneWorkspaces = (limits: PruneLimits) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const config = yield* AppConfig
    const retentionSeconds = Math.ceil(Duration.toSeconds(config.completedRunRetention))
    const ttlSeconds = Math.ceil(Duration.toSeconds(config.idempotencyKeyTtl))
    const workspaces = yield* (yield* Workspaces).list
    let completedRuns = 0
    let idempotencyKeys = 0
    for (const workspace of workspaces) {
      const prune = (table: string, due: Fragment) =>
        deleteInBatches(sql(workspace.table(table)), due, limits).pipe(
          // Its only failure is a statement's: dropped meanwhile, or busy (a lock not granted in time).
          // The next run takes it up.
          Effect.catch((error) => Effect.as(Effect.logDebug(`pruning ${table} skipped a workspace`, error.message), 0)),
          Effect.annotateLogs({ workspace: workspace.slug })
        )
      completedRuns += yield* prune("completed_runs", dueCompletedRuns(sql, retentionSeconds))
      idempotencyKeys += yield* prune("idempotency_keys", dueIdempotencyKeys(sql, ttlSeconds))
    }
    return { completedRuns, idempotencyKeys }
  })

/** One pruning pass: bounded, safe to run on every instance at once. */
export const pruneOnce = (limits: PruneLimits = defaultPruneLimits) =>
  Effect.gen(function* () {
    const sessions = yield* pruneSessions(limits)
    const { completedRuns, idempotencyKeys } = yield* pruneWorkspaces(limits)
    return { sessions, completedRuns, idempotencyKeys } satisfies PruneReport
  })
