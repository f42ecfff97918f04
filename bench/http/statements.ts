/**
 * The statements the service sends for a single-record update with audit and
 * for a timeline page, as text for node-postgres: the floors of
 * `bench:audit` and `bench:http` run exactly these, with the same columns and
 * casts (src/records/RecordStore.ts, src/unitOfWork/AuditStaging.ts,
 * src/audit/Timeline.ts). Values are merged and the audit row built in plain
 * JavaScript, as little as a hand-written server would do. Each statement is
 * prepared once per connection (named), as the service's driver does.
 *
 * The audit INSERT is the service's own text and parameters
 * (`ledgerInsertText`, `ledgerInsertParameters`: the salts and content
 * hashes of docs/ledger.md included), so the floor and the service cannot
 * drift. The INSERT as it was before the ledger (positions only, no chain) is
 * kept beside it: the chain's cost is the difference between the two.
 */
import type { Actor } from "../../src/api/Actor"
import type { Json, RecordValues } from "../../src/api/Json"
import { auditTableRow, ledgerInsertParameters, ledgerInsertText } from "../../src/unitOfWork/AuditStaging"
import type { StagedRow } from "../../src/unitOfWork/AuditStaging"
import { prepared } from "./pg"
import type { PgClient, PgPool } from "./pg"

const isoMicros = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`
const recordColumns = `id::text AS id, business_object, state, version::text AS version, values, ${isoMicros("created_at")} AS created_at, ${isoMicros("updated_at")} AS updated_at`
const timelineColumns = `e.id::text AS id,
              ${isoMicros("e.at")} AS at,
              e.seq::text AS seq, e.actor, e.correlation_id::text AS correlation_id,
              e.business_object, e.business_object_id, e.operation, e.cause, e.record, e.changes`

/** A staged row as the INSERT before the ledger took it: the table's columns, no salt. */
export const unchainedAuditRow = (row: StagedRow) => auditTableRow(row, null)

export interface RecordRow {
  readonly id: string
  readonly business_object: string
  readonly state: string
  readonly version: string
  readonly values: RecordValues
  readonly created_at: string
  readonly updated_at: string
}

export const statementsOf = (schema: string) => {
  const records = `"${schema}"."records"`
  const audit = `"${schema}"."audit_entries"`
  return {
    lock: prepared(`SELECT ${recordColumns} FROM ${records}
                WHERE business_object = $1 AND id = $2 FOR UPDATE`),
    update: prepared(`UPDATE ${records} SET values = $1::jsonb, version = version + 1, updated_at = now()
          WHERE business_object = $2 AND id = $3
          RETURNING ${recordColumns}`),
    // As the service sends it (migration 0009): positions and chain links under the workspace's feed lock;
    // its text for a unit of one row, and for a unit of more.
    audit: prepared(ledgerInsertText(schema, 1)),
    auditRows: prepared(ledgerInsertText(schema, 2)),
    // As the service sent it from migration 0008 to 0009: the CTE takes the unit's feed positions and holds the
    // workspace's feed lock to COMMIT (docs/feed.md, "Order"), so the floor pays the same serialisation; no chain.
    auditWithoutChain: prepared(`WITH taken AS (
      UPDATE "${schema}"."feed_position" SET position = position + jsonb_array_length($1::jsonb)
      RETURNING position - jsonb_array_length($1::jsonb) AS base
    )
    INSERT INTO ${audit}
      (id, actor, correlation_id, business_object, business_object_id, record_version, operation, cause, record, changes,
       parent_correlation_id, position)
    SELECT r.id, r.actor, r.correlation_id, r.business_object, r.business_object_id, r.record_version, r.operation,
      r.cause, r.record, r.changes, r.parent_correlation_id, taken.base + r.ordinality
    FROM taken, jsonb_populate_recordset(NULL::${audit}, $1::jsonb) WITH ORDINALITY AS r
    ORDER BY r.ordinality`),
    page: prepared(`SELECT ${timelineColumns}
        FROM ${audit} AS e
        WHERE e.business_object = $1 AND e.business_object_id = $2
        ORDER BY e.seq DESC
        LIMIT $3`),
    pageAfter: prepared(`SELECT ${timelineColumns}
        FROM ${audit} AS e
        WHERE e.business_object = $1 AND e.business_object_id = $2
        AND e.seq < $3::bigint
        ORDER BY e.seq DESC
        LIMIT $4`)
  } as const
}
export type Statements = ReturnType<typeof statementsOf>

/** Which audit INSERT a floor's unit sends: the service's (chained), the one before the ledger, or none. */
export type AuditInsert = "ledger" | "withoutChain" | "none"

/** Where the audit INSERT's time went in one unit: building its parameters (ms), and the statement's round trip (ms). */
export interface AuditTiming {
  readonly parametersMs: number
  readonly statementMs: number
}

/**
 * One update unit on node-postgres: BEGIN, the locking read, the UPDATE, the
 * audit INSERT (`audit`), COMMIT, on one pooled connection. Gives the
 * written row; `onAudit` is told how long the INSERT took.
 */
export const updateUnit = async (
  pool: PgPool,
  statements: Statements,
  input: {
    readonly businessObject: string
    readonly id: string
    readonly patch: RecordValues
    readonly actor: Actor
    readonly audit: AuditInsert
    readonly onAudit?: (timing: AuditTiming) => void
  }
): Promise<RecordRow> => {
  const client: PgClient = await pool.connect()
  try {
    await client.query("BEGIN")
    const current = (await client.query<RecordRow>({ ...statements.lock, values: [input.businessObject, input.id] }))
      .rows[0]
    if (current === undefined) throw new Error(`no record ${input.id}`)
    const values = { ...current.values, ...input.patch }
    const updated = (
      await client.query<RecordRow>({
        ...statements.update,
        values: [JSON.stringify(values), input.businessObject, input.id]
      })
    ).rows[0]
    if (updated === undefined) throw new Error(`no record ${input.id}`)
    if (input.audit !== "none") {
      const started = performance.now()
      const changes: Record<string, { from: Json; to: Json }> = {}
      for (const [field, to] of Object.entries(input.patch))
        changes[field] = { from: current.values[field] ?? null, to }
      const row: StagedRow = {
        id: crypto.randomUUID(),
        actor: input.actor,
        correlationId: crypto.randomUUID(),
        businessObject: input.businessObject,
        businessObjectId: input.id,
        recordVersion: Number(updated.version),
        operation: "updated",
        cause: null,
        changes
      }
      const statement =
        input.audit === "ledger"
          ? { ...statements.audit, values: ledgerInsertParameters([row], null) }
          : { ...statements.auditWithoutChain, values: [JSON.stringify([unchainedAuditRow(row)])] }
      const sent = performance.now()
      await client.query(statement)
      input.onAudit?.({ parametersMs: sent - started, statementMs: performance.now() - sent })
    }
    await client.query("COMMIT")
    client.release()
    return updated
  } catch (error) {
    await client.query("ROLLBACK").catch(() => undefined)
    client.release(error instanceof Error ? error : new Error(String(error)))
    throw error
  }
}

/** One timeline page on node-postgres (one row more than asked tells whether another follows). */
export const timelinePage = async (
  pool: PgPool,
  statements: Statements,
  input: { readonly businessObject: string; readonly id: string; readonly afterSeq?: string; readonly limit: number }
) => {
  const { rows } =
    input.afterSeq === undefined
      ? await pool.query<Record<string, unknown>>({
          ...statements.page,
          values: [input.businessObject, input.id, input.limit + 1]
        })
      : await pool.query<Record<string, unknown>>({
          ...statements.pageAfter,
          values: [input.businessObject, input.id, input.afterSeq, input.limit + 1]
        })
  const shown = rows.slice(0, input.limit)
  const last = shown[shown.length - 1]
  return { rows: shown, nextSeq: rows.length > input.limit && last !== undefined ? String(last.seq) : null }
}
