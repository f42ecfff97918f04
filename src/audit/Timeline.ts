import { Effect, Option } from "effect"
import { ReadSqlClient } from "../db/Database"
import type { Workspace } from "../api/Workspace"
import { AuditEntry, TimelinePage } from "../api/AuditEntry"
import { encodeCursor } from "./Cursor"
import type { CursorPosition } from "./Cursor"

/**
 * A row as the query returns it. The rows were written by this service (the
 * table's CHECKs hold the verb rules) and are not decoded again on the way
 * out: a page is on the hot path, and the response encoder still checks
 * every entry against the AuditEntry schema.
 */
type Row = Omit<AuditEntry, "record" | "changes"> & {
  readonly seq: string
  readonly record: AuditEntry["record"] | null
  readonly changes: AuditEntry["changes"] | null
}

const toEntry = ({ changes, record, seq: _seq, ...row }: Row) =>
  new AuditEntry(
    { ...row, ...(record === null ? {} : { record }), ...(changes === null ? {} : { changes }) },
    { disableValidation: true }
  )

/**
 * Reads one record's timeline, newest first, a page at a time. The order is
 * `seq` descending: the record's commit order, not the order of `at` (the
 * time each unit began; see docs/audit.md, "Order"). The WHERE clause and
 * ORDER BY follow the `audit_entries_timeline` index exactly, so a page is
 * one index range scan with no sort, as cheap at page 200 as at page 1.
 */
export class Timeline extends Effect.Service<Timeline>()("Timeline", {
  effect: Effect.gen(function* () {
    // Reads on the read pool; inside a unit of work they join its transaction.
    const sql = yield* ReadSqlClient

    const query = <A extends object = Row>(
      workspace: Workspace,
      businessObject: string,
      businessObjectId: string,
      after: Option.Option<CursorPosition>,
      limit: number
    ) =>
      // Columns are qualified with `e.`: the output column `seq` is text, and
      // an unqualified ORDER BY would sort by it (and by no index).
      sql<A>`SELECT e.id::text AS id,
              to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
              e.seq::text AS seq, e.actor, e.correlation_id::text AS correlation_id,
              e.business_object, e.business_object_id, e.operation, e.cause, e.record, e.changes
        FROM ${sql(workspace.table("audit_entries"))} AS e
        WHERE e.business_object = ${businessObject} AND e.business_object_id = ${businessObjectId}
        ${Option.match(after, {
          onNone: () => sql.literal(""),
          onSome: (position) => sql`AND e.seq < ${position.seq}::bigint`
        })}
        ORDER BY e.seq DESC
        LIMIT ${limit}`

    const page = (
      workspace: Workspace,
      businessObject: string,
      businessObjectId: string,
      after: Option.Option<CursorPosition>,
      limit: number
    ) =>
      Effect.gen(function* () {
        // One row more than asked tells whether another page follows.
        const rows = yield* query<Row>(workspace, businessObject, businessObjectId, after, limit + 1)
        const shown = rows.slice(0, limit)
        const entries = shown.map(toEntry)
        const last = shown[shown.length - 1]
        const nextCursor = rows.length > limit && last ? encodeCursor({ seq: last.seq }) : null
        return new TimelinePage({ entries, nextCursor })
      }).pipe(Effect.orDie)

    /** The SQL text and parameters of a page's statement, for EXPLAIN (tests, the benchmark); never run here. */
    const compiledQuery = (
      workspace: Workspace,
      businessObject: string,
      businessObjectId: string,
      after: Option.Option<CursorPosition>,
      limit: number
    ) => query(workspace, businessObject, businessObjectId, after, limit).compile()

    return { page, compiledQuery } as const
  })
}) {}
