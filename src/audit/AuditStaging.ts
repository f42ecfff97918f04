import { SqlClient } from "@effect/sql"
import { Context, Effect } from "effect"
import type { Actor } from "../context/Actor"
import type { Cause, Operation } from "../context/Cause"
import type { Changes, RecordValues } from "../diff"
import type { Workspace } from "../tenancy/Workspace"

/** A row waiting for its unit of work to commit. `at` and `seq` are given by the INSERT. */
export interface StagedRow {
  readonly id: string
  readonly actor: Actor
  readonly correlationId: string
  readonly businessObject: string
  readonly businessObjectId: string
  readonly operation: Operation
  readonly cause: Cause | null
  readonly record?: RecordValues
  readonly changes?: Changes
}

export interface AuditStagingShape {
  readonly stage: (row: StagedRow) => Effect.Effect<void>
  /** Writes every staged row with ONE INSERT, in staging order; the last statement of the unit. */
  readonly flush: Effect.Effect<number>
  /** Drops what is staged: the unit failed, nothing of it is written. */
  readonly discard: Effect.Effect<void>
}

/** The audit rows of the unit of work in progress. Provided by the unit, for its transaction only. */
export class AuditStaging extends Context.Tag("AuditStaging")<AuditStaging, AuditStagingShape>() {}

/**
 * All rows travel as one JSON parameter expanded by `jsonb_to_recordset`, so
 * a unit of any size is one statement well under PostgreSQL's bind-parameter
 * limit. `WITH ORDINALITY` keeps the staging order in `seq`; `at` defaults
 * to `now()`, the transaction timestamp, the same for every row of the unit.
 */
const insertAll = (sql: SqlClient.SqlClient, workspace: Workspace, rows: ReadonlyArray<StagedRow>) =>
  Effect.gen(function* () {
    const payload = JSON.stringify(
      rows.map((row) => ({
        id: row.id,
        actor: row.actor,
        correlation_id: row.correlationId,
        business_object: row.businessObject,
        business_object_id: row.businessObjectId,
        operation: row.operation,
        cause: row.cause,
        record: row.record ?? null,
        changes: row.changes ?? null
      }))
    )
    yield* sql`INSERT INTO ${sql(workspace.table("audit_entries"))}
        (id, actor, correlation_id, business_object, business_object_id, operation, cause, record, changes)
      SELECT r.id, r.actor, r.correlation_id, r.business_object, r.business_object_id, r.operation, r.cause, r.record, r.changes
      FROM jsonb_array_elements(${payload}::jsonb) WITH ORDINALITY AS e(value, position),
        LATERAL jsonb_to_record(e.value) AS r(
          id uuid, actor jsonb, correlation_id uuid, business_object text, business_object_id text,
          operation text, cause jsonb, record jsonb, changes jsonb)
      ORDER BY e.position`.pipe(Effect.orDie)
  })

/** A fresh staging area for one unit of work in `workspace`. */
export const makeAuditStaging = (workspace: Workspace) =>
  Effect.map(SqlClient.SqlClient, (sql): AuditStagingShape => {
    let staged: Array<StagedRow> = []
    return {
      stage: (row) => Effect.sync(() => void staged.push(row)),
      flush: Effect.suspend(() => {
        const rows = staged
        staged = []
        return rows.length > 0 ? Effect.as(insertAll(sql, workspace, rows), rows.length) : Effect.succeed(0)
      }),
      discard: Effect.sync(() => {
        staged = []
      })
    }
  })
