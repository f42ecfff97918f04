import type { SqlClient } from "effect/sql"

/**
 * An audit row of `e` as its wire shape (AuditEntry), built by PostgreSQL as
 * JSON text: `record` and `changes` only where the verb has them, `at` to the
 * microsecond. The feed's export writes it as it comes, never parsed.
 */
export const entryJson = (sql: SqlClient.SqlClient) =>
  sql.literal(`(jsonb_build_object(
        'id', e.id::text,
        'at', to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
        'actor', e.actor, 'correlationId', e.correlation_id::text,
        'businessObject', e.business_object, 'businessObjectId', e.business_object_id,
        'operation', e.operation, 'cause', e.cause)
      || CASE WHEN e.record IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('record', e.record) END
      || CASE WHEN e.changes IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('changes', e.changes) END)::text`)
