import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import type { Workspace } from "../tenancy/Workspace"
import { AuditEntry, TimelinePage } from "./AuditEntry"
import { encodeCursor } from "./Cursor"
import type { CursorPosition } from "./Cursor"

const Row = Schema.Struct({
  ...AuditEntry.fields,
  seq: Schema.String,
  cause: Schema.NullOr(AuditEntry.fields.cause),
  record: Schema.NullOr(Schema.Unknown),
  changes: Schema.NullOr(Schema.Unknown)
})

const toEntry = Schema.decodeUnknown(AuditEntry)

/**
 * Reads one record's timeline, newest first (`at` then `seq` descending),
 * a page at a time. The WHERE clause and ORDER BY follow the
 * `audit_entries_timeline` index exactly, so a page is one index range scan
 * with no sort, as cheap at page 200 as at page 1.
 */
export class Timeline extends Effect.Service<Timeline>()("Timeline", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const query = (
      workspace: Workspace,
      businessObject: string,
      businessObjectId: string,
      after: Option.Option<CursorPosition>,
      limit: number
    ) =>
      // Columns are qualified with `e.`: the output columns `at` and `seq` are
      // text, and an unqualified ORDER BY would sort by them (and by no index).
      sql`SELECT e.id::text AS id,
              to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
              e.seq::text AS seq, e.actor, e.correlation_id::text AS correlation_id,
              e.business_object, e.business_object_id, e.operation, e.cause, e.record, e.changes
        FROM ${sql(workspace.table("audit_entries"))} AS e
        WHERE e.business_object = ${businessObject} AND e.business_object_id = ${businessObjectId}
        ${Option.match(after, {
          onNone: () => sql.literal(""),
          onSome: (position) => sql`AND (e.at, e.seq) < (${position.at}::timestamptz, ${position.seq}::bigint)`
        })}
        ORDER BY e.at DESC, e.seq DESC
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
        const raw = yield* query(workspace, businessObject, businessObjectId, after, limit + 1)
        const rows = yield* Schema.decodeUnknown(Schema.Array(Row))(raw)
        const shown = rows.slice(0, limit)
        const entries = yield* Effect.forEach(shown, ({ seq: _seq, record, changes, ...row }) =>
          toEntry({
            ...row,
            ...(record === null ? {} : { record }),
            ...(changes === null ? {} : { changes })
          })
        )
        const last = shown[shown.length - 1]
        const nextCursor = rows.length > limit && last ? encodeCursor({ at: last.at, seq: last.seq }) : null
        return new TimelinePage({ entries, nextCursor })
      }).pipe(Effect.orDie)

    return { page, query } as const
  })
}) {}
