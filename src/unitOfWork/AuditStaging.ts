import { randomBytes } from "node:crypto"
import type { SqlClient } from "effect/sql"
import { Effect } from "effect"
import type { Actor } from "../api/Actor"
import type { Cause, Operation } from "../api/Cause"
import type { Changes } from "../api/Changes"
import type { RecordValues } from "../api/Json"
import type { Workspace } from "../api/Workspace"
import { executeFixed, quotedName } from "../db/fixedStatement"
import { contentHash, rootSalts } from "../chain/rowHash"

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
 * The same statement takes the unit's feed positions and chains its rows
 * into the workspace's ledger (docs/ledger.md): it locks the workspace's
 * one-row counter until COMMIT, so the units of a workspace pass this point
 * one at a time and their positions follow their commit order (docs/feed.md,
 * "Order"); from the counter's head hash the recursive CTE links each row
 * (`linkHash` in src/ledger/rowHash.ts, the same bytes) and the counter keeps
 * the last link. Each row's content hash is computed here beforehand, with a
 * fresh salt for its values' commitments. It adds no round trip: the counter
 * is read and written inside the INSERT.
 */
const insertAll = (
  sql: SqlClient.SqlClient,
  workspace: Workspace,
  parentCorrelationId: string | null,
  rows: ReadonlyArray<StagedRow>
) => {
  const contents: Array<string> = []
  const payload = JSON.stringify(
    rows.map((row) => {
      const salt = randomBytes(16)
      contents.push(
        contentHash(
          {
            id: row.id,
            actor: row.actor,
            correlationId: row.correlationId,
            parentCorrelationId,
            businessObject: row.businessObject,
            businessObjectId: row.businessObjectId,
            recordVersion: row.recordVersion,
            operation: row.operation,
            cause: row.cause,
            record: row.record ?? null,
            changes: row.changes ?? null
          },
          rootSalts(salt)
        ).toString("hex")
      )
      return {
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
        parent_correlation_id: parentCorrelationId,
        salt: `\\x${salt.toString("hex")}`
      }
    })
  )
  const table = quotedName(workspace.table("audit_entries"))
  const counter = quotedName(workspace.table("feed_position"))
  return executeFixed(
    sql,
    `WITH RECURSIVE
    head AS (SELECT position, head FROM ${counter} FOR UPDATE),
    contents AS (
      SELECT u.ord, decode(u.hex, 'hex') AS content FROM unnest(string_to_array($3::text, ',')) WITH ORDINALITY AS u(hex, ord)
    ),
    chain(ord, position, hash) AS (
      SELECT 0::bigint, head.position, head.head FROM head
      UNION ALL
      SELECT c.ord + 1, c.position + 1,
        sha256(decode('05', 'hex') || c.hash || int8send(c.position + 1)
          || int8send((extract(epoch FROM now()) * 1000000)::bigint) || contents.content)
      FROM chain c JOIN contents ON contents.ord = c.ord + 1
    ),
    moved AS (
      UPDATE ${counter} SET position = last.position, head = last.hash
      FROM (SELECT position, hash FROM chain WHERE ord = $1) last
    )
    INSERT INTO ${table}
      (id, actor, correlation_id, business_object, business_object_id, record_version, operation, cause, record, changes,
       parent_correlation_id, position, salt, hash)
    SELECT r.id, r.actor, r.correlation_id, r.business_object, r.business_object_id, r.record_version, r.operation,
      r.cause, r.record, r.changes, r.parent_correlation_id, chain.position, r.salt, chain.hash
    FROM jsonb_populate_recordset(NULL::${table}, $2::jsonb) WITH ORDINALITY AS r
    JOIN chain ON chain.ord = r.ordinality
    ORDER BY r.ordinality`,
    [rows.length, payload, contents.join(",")]
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
