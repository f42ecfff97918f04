import type { Actor } from "../api/Actor"
import type { Cause, Operation } from "../api/Cause"
import type { Changes } from "../api/Changes"
import type { RecordValues } from "../api/Json"
import type { LedgerRow } from "./rowHash"

/**
 * An audit row as read for hashing: `ledgerRowColumns` selected from
 * `audit_entries AS e` (qualified: the output column `position` is text, and
 * an unqualified ORDER BY would sort by it). Numbers PostgreSQL keeps as bigint come as text, the
 * timestamp as microseconds since the epoch (a JavaScript Date would lose them).
 */
export interface StoredLedgerRow {
  readonly id: string
  readonly actor: Actor
  readonly correlationId: string
  readonly parentCorrelationId: string | null
  readonly businessObject: string
  readonly businessObjectId: string
  readonly recordVersion: string | number | null
  readonly operation: Operation
  readonly cause: Cause | null
  readonly record: RecordValues | null
  readonly changes: Changes | null
  readonly position: string
  readonly atMicros: string
  readonly seq: string
}

export const ledgerRowColumns = `e.id::text AS id, e.actor, e.correlation_id::text AS "correlationId",
  e.parent_correlation_id::text AS "parentCorrelationId", e.business_object AS "businessObject",
  e.business_object_id AS "businessObjectId", e.record_version AS "recordVersion", e.operation, e.cause, e.record,
  e.changes, e.position::text AS position, (extract(epoch FROM e.at) * 1000000)::bigint::text AS "atMicros",
  e.seq::text AS seq`

export const ledgerRowOf = (stored: StoredLedgerRow): LedgerRow => ({
  id: stored.id,
  actor: stored.actor,
  correlationId: stored.correlationId,
  parentCorrelationId: stored.parentCorrelationId,
  businessObject: stored.businessObject,
  businessObjectId: stored.businessObjectId,
  recordVersion: stored.recordVersion === null ? null : Number(stored.recordVersion),
  operation: stored.operation,
  cause: stored.cause,
  record: stored.record,
  changes: stored.changes
})
