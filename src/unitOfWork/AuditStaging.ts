import type { SqlClient } from "effect/sql"
import { Effect } from "effect"
import type { Actor } from "../api/Actor"
import type { Cause, Operation } from "../api/Cause"
import type { Changes } from "../api/Changes"
import type { RecordValues } from "../api/Json"
import type { Workspace } from "../api/Workspace"
import { executeFixed, quotedName } from "../db/fixedStatement"
import { contentHash, rootSalts } from "../chain/rowHash"
import { freshSalt } from "./saltPool"
import { encodeUnitMessage, unitMessagePrefix } from "../feedPositions/unitMessage"
import type { FeedModeName } from "../feedPositions/FeedMode"

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

/** A staged row as `audit_entries` columns (jsonb_populate_recordset takes them by name); the INSERT adds the rest. */
export const auditTableRow = (row: StagedRow, parentCorrelationId: string | null) => ({
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
})

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
 * "Order"); from the counter's head hash it links each row (`linkHash` in
 * src/chain/rowHash.ts, the same bytes) and the counter keeps the last
 * link. Each row's content hash is computed here beforehand, with a fresh
 * salt for its values' commitments. It adds no round trip: the counter is
 * read and written inside the INSERT.
 */
export const ledgerInsertParameters = (
  rows: ReadonlyArray<StagedRow>,
  parentCorrelationId: string | null
): readonly [number, string, string] => {
  const contents: Array<string> = []
  const payload = JSON.stringify(
    rows.map((row) => {
      const salt = freshSalt()
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
      return { ...auditTableRow(row, parentCorrelationId), salt: `\\x${salt.toString("hex")}` }
    })
  )
  return [rows.length, payload, contents.join("")]
}

/**
 * The text of the ledger INSERT of `rows` rows for the workspace of
 * `schema`: `$1` the number of rows, `$2` the rows, `$3` their content
 * hashes one after another (hex), as `ledgerInsertParameters` gives them.
 * The benches' floors send these very texts (bench/http/statements.ts).
 */
export const ledgerInsertText = (schema: string, rows: number): string =>
  rows === 1 ? oneRowInsert(schema) : chainedInsert(schema)

/**
 * Each step of the recursion reads its content hash at its offset in `$3`:
 * no join, and no row estimate that depends on a parameter, so PostgreSQL
 * keeps one generic plan for the prepared statement. Hashes unnested from a
 * parameter array kept it on a custom plan, planned again at every unit
 * (about 0.2 ms of a one-row INSERT's 0.5 ms; BENCHMARKS.md, "Ledger").
 */
const chainedInsert = (schema: string): string => {
  const table = quotedName(`${schema}.audit_entries`)
  const counter = quotedName(`${schema}.feed_position`)
  return `WITH RECURSIVE
    head AS (SELECT position, head FROM ${counter} FOR UPDATE),
    contents AS MATERIALIZED (SELECT decode($3::text, 'hex') AS hashes),
    chain(ord, position, hash) AS (
      SELECT 0::bigint, head.position, head.head FROM head
      UNION ALL
      SELECT c.ord + 1, c.position + 1,
        sha256(decode('05', 'hex') || c.hash || int8send(c.position + 1)
          || int8send((extract(epoch FROM now()) * 1000000)::bigint)
          || substring(contents.hashes FROM c.ord::int * 32 + 1 FOR 32))
      FROM chain c, contents WHERE c.ord < $1
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
    ORDER BY r.ordinality`
}

/**
 * A unit of one row (most units) needs no recursion: its link is the
 * counter's next head, so the counter's UPDATE computes it from the head it
 * replaces, the same bytes as a step of the chain above. Under READ
 * COMMITTED an UPDATE that waited for the row evaluates its SET again on the
 * version the unit before committed, so no lock is taken beforehand: most of
 * the chain's time in PostgreSQL (0.06 ms of execution, now 0.02), and a WAL
 * record, less per unit (BENCHMARKS.md, "Ledger").
 */
const oneRowInsert = (schema: string): string => {
  const table = quotedName(`${schema}.audit_entries`)
  const counter = quotedName(`${schema}.feed_position`)
  return `WITH moved AS (
      UPDATE ${counter} SET position = position + $1,
        head = sha256(decode('05', 'hex') || head || int8send(position + $1)
          || int8send((extract(epoch FROM now()) * 1000000)::bigint) || decode($3::text, 'hex'))
      RETURNING position, head
    )
    INSERT INTO ${table}
      (id, actor, correlation_id, business_object, business_object_id, record_version, operation, cause, record, changes,
       parent_correlation_id, position, salt, hash)
    SELECT r.id, r.actor, r.correlation_id, r.business_object, r.business_object_id, r.record_version, r.operation,
      r.cause, r.record, r.changes, r.parent_correlation_id, moved.position, r.salt, moved.head
    FROM moved, jsonb_populate_recordset(NULL::${table}, $2::jsonb) AS r`
}

/**
 * WAL mode (docs/feed.md, "Order"): the rows go in without position or hash
 * and no lock is taken; the same statement emits the unit's transactional
 * logical message (`pg_logical_emit_message`), which logical decoding hands
 * the positioner in commit order, and never for a unit that rolled back.
 * `$1` the rows, `$2` the message (`walInsertParameters`).
 */
export const walInsertText = (schema: string): string => {
  const table = quotedName(`${schema}.audit_entries`)
  return `WITH message AS MATERIALIZED (SELECT pg_logical_emit_message(true, '${unitMessagePrefix}', $2::text) AS lsn)
    INSERT INTO ${table}
      (id, actor, correlation_id, business_object, business_object_id, record_version, operation, cause, record, changes,
       parent_correlation_id, salt)
    SELECT r.id, r.actor, r.correlation_id, r.business_object, r.business_object_id, r.record_version, r.operation,
      r.cause, r.record, r.changes, r.parent_correlation_id, r.salt
    FROM message, jsonb_populate_recordset(NULL::${table}, $1::jsonb) WITH ORDINALITY AS r
    ORDER BY r.ordinality`
}

/** `walInsertText`'s parameters: the rows as for the lock-mode INSERT, and the unit's message naming their hashes. */
export const walInsertParameters = (
  workspace: Workspace,
  rows: ReadonlyArray<StagedRow>,
  parentCorrelationId: string | null
): readonly [string, string] => {
  const [, payload, contents] = ledgerInsertParameters(rows, parentCorrelationId)
  const correlationId = rows[0]?.correlationId ?? ""
  return [payload, encodeUnitMessage({ workspaceId: workspace.id, schema: workspace.schema, correlationId }, contents)]
}

const insertAll = (
  sql: SqlClient.SqlClient,
  workspace: Workspace,
  parentCorrelationId: string | null,
  rows: ReadonlyArray<StagedRow>,
  mode: FeedModeName
) =>
  (mode === "wal"
    ? executeFixed(sql, walInsertText(workspace.schema), walInsertParameters(workspace, rows, parentCorrelationId))
    : executeFixed(
        sql,
        ledgerInsertText(workspace.schema, rows.length),
        ledgerInsertParameters(rows, parentCorrelationId)
      )
  ).pipe(Effect.orDie)

/**
 * A fresh staging area for one unit of work in `workspace` (run for the unit `parentCorrelationId`, if any),
 * flushing as the deployment's feed mode says (`lock`: positions taken in the INSERT; `wal`: after COMMIT).
 */
export const makeAuditStaging = (
  sql: SqlClient.SqlClient,
  workspace: Workspace,
  parentCorrelationId: string | null,
  mode: FeedModeName = "lock"
): AuditStaging => {
  let staged: Array<StagedRow> = []
  return {
    stage: (row) => Effect.sync(() => void staged.push(row)),
    flush: Effect.suspend(() => {
      const rows = staged
      staged = []
      return rows.length > 0
        ? Effect.as(insertAll(sql, workspace, parentCorrelationId, rows, mode), rows.length)
        : Effect.succeed(0)
    }),
    discard: Effect.sync(() => {
      staged = []
    })
  }
}
