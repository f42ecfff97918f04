import type { SqlClient } from "effect/sql"

const entryObject = `jsonb_build_object(
        'id', e.id::text,
        'at', to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'actor', e.actor, 'correlationId', e.correlation_id::text,
        'businessObject', e.business_object, 'businessObjectId', e.business_object_id,
        'operation', e.operation, 'cause', e.cause)
      || CASE WHEN e.record IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('record', e.record) END
      || CASE WHEN e.changes IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('changes', e.changes) END`

/**
 * An audit row of `e` as its wire shape (AuditEntry), built by PostgreSQL as
 * JSON text: `record` and `changes` only where the verb has them, `at` to the
 * microsecond. The feed's export writes it as it comes, never parsed.
 */
export const entryJson = (sql: SqlClient.SqlClient) => sql.literal(`(${entryObject})::text`)

/**
 * The entry with what an auditor needs to recompute the row's place in the
 * ledger (LedgerFeedEntry, docs/ledger.md "For an auditor"): its position,
 * its salts and stored hash (hex), and the columns the content hash covers
 * that the entry leaves out. Every one of these keys is always there, null
 * when the row has no value for it.
 */
export const ledgerEntryJson = (sql: SqlClient.SqlClient) =>
  sql.literal(`(${entryObject} || jsonb_build_object(
        'position', e.position::text, 'parentCorrelationId', e.parent_correlation_id::text,
        'recordVersion', e.record_version, 'salt', encode(e.salt, 'hex'), 'erasedSalts', e.erased_salts,
        'hash', encode(e.hash, 'hex')))::text`)
