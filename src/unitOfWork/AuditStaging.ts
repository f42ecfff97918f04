import type { SqlClient } from "effect/sql"
import { Effect } from "effect"
import type { Actor } from "../api/Actor"
import type { Cause, Operation } from "../api/Cause"
import type { Changes } from "../api/Changes"
import type { RecordValues } from "../api/Json"
import type { Workspace } from "../api/Workspace"
import { executeFixed, quotedName } from "../db/fixedStatement"

/** A row waiting for its unit of work to commit. `at` and `seq` are given by the INSERT. */
export interface StagedRow {
  readonly id: string
  readonly actor: Actor
  readonly correlationId: string
  readonly businessObject: string
  readonly businessObjectId: string
  /** The version the entry's write gave its record. */
  readonly recordVersion: number
  readonly operation: Operation
  readonly cause: Cause | null
  readonly record?: RecordValues
  readonly changes?: Changes
}

/** The audit rows of one unit of work (`CurrentUnit.staging`), for its transaction only. */
export interface AuditStaging {
  readonly stage: (row: StagedRow) => Effect.Effect<void>
  /** Writes every staged row with ONE INSERT, in staging order; the last statement of the unit. */
  readonly flush: Effect.Effect<number>
  /** Drops what is staged: the unit failed, nothing of it is written. */
  readonly discard: Effect.Effect<void>
}

/**
 * All rows travel as one JSON parameter expanded by `jsonb_populate_recordset`
 * over the table's own row type, so a unit of any size is one statement, well
 * under PostgreSQL's bind-parameter limit and cheap to plan. The function
 * yields the rows in array order, so `seq` follows the staging order; `at`
 * defaults to `now()`, the transaction timestamp, the same for every row.
 *
 * The same statement takes the unit's feed positions: the CTE moves the
 * workspace's one-row counter on by the number of rows and locks it until
 * COMMIT, so the units of a workspace pass this point one at a time and
 * their positions follow their commit order (docs/feed.md, "Order"). It adds
 * no round trip: the counter is read and written inside the INSERT.
 */
const insertAll = (
  sql: SqlClient.SqlClient,
  workspace: Workspace,
  parentCorrelationId: string | null,
  rows: ReadonlyArray<StagedRow>
) => {
  const payload = JSON.stringify(
    rows.map((row) => ({
      id: row.id,
      actor: row.actor,
      correlation_id: row.correlationId,
      business_object: row.businessObject,
      business_object_id: row.businessObjectId,
      record_version: row.recordVersion,
      operation: row.operation,
      cause: row.cause,
      record: row.record ?? null,
      changes: row.changes ?? null,
      parent_correlation_id: parentCorrelationId
    }))
  )
  const table = quotedName(workspace.table("audit_entries"))
  return executeFixed(
    sql,
    `WITH taken AS (
      UPDATE ${quotedName(workspace.table("feed_position"))} SET position = position + $1
      RETURNING position - $1 AS base
    )
    INSERT INTO ${table}
      (id, actor, correlation_id, business_object, business_object_id, record_version, operation, cause, record, changes,
       parent_correlation_id, position)
    SELECT r.id, r.actor, r.correlation_id, r.business_object, r.business_object_id, r.record_version, r.operation,
      r.cause, r.record, r.changes, r.parent_correlation_id, taken.base + r.ordinality
    FROM taken, jsonb_populate_recordset(NULL::${table}, $2::jsonb) WITH ORDINALITY AS r
    ORDER BY r.ordinality`,
    [rows.length, payload]
  ).pipe(Effect.orDie)
}

/** A fresh staging area for one unit of work in `workspace` (run for the unit `parentCorrelationId`, if any). */
export const makeAuditStaging = (
  sql: SqlClient.SqlClient,
  workspace: Workspace,
  parentCorrelationId: string | null
): AuditStaging => {
  let staged: Array<StagedRow> = []
  return {
    stage: (row) => Effect.sync(() => void staged.push(row)),
    flush: Effect.suspend(() => {
      const rows = staged
      staged = []
      return rows.length > 0
        ? Effect.as(insertAll(sql, workspace, parentCorrelationId, rows), rows.length)
        : Effect.succeed(0)
    }),
    discard: Effect.sync(() => {
      staged = []
    })
  }
}
