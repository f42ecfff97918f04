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
    ) => sql`SELECT id::text AS id,
              to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
              seq::text AS seq, actor, correlation_id::text AS correlation_id,
              business_object, business_object_id, operation, cause, record, changes
        FROM ${sql(workspace.table("audit_entries"))}
        WHERE business_object = ${businessObject} AND business_object_id = ${businessObjectId}
        ${Option.match(after, {
          onNone: () => sql.literal(""),
          onSome: (position) => sql`AND (at, seq) < (${position.at}::timestamptz, ${position.seq}::bigint)`
        })}
        ORDER BY at DESC, seq DESC
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
