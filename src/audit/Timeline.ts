import { Context, Effect, Layer, Option } from "effect"
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
    { disableChecks: true }
  )

const make = Effect.gen(function* () {
  // Reads on the read pool; inside a unit of work they join its transaction.
  const sql = yield* ReadSqlClient

  // Columns are qualified with `e.`: the output column `seq` is text, and
  // an unqualified ORDER BY would sort by it (and by no index).
  const columns = sql.literal(`e.id::text AS id,
            to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
            e.seq::text AS seq, e.actor, e.correlation_id::text AS correlation_id,
            e.business_object, e.business_object_id, e.operation, e.cause, e.record, e.changes`)

  const query = <A extends object = Row>(
    workspace: Workspace,
    businessObject: string,
    businessObjectId: string,
    after: Option.Option<CursorPosition>,
    limit: number
  ) =>
    sql<A>`SELECT ${columns}
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

  /**
   * The entries that took a record past `version` (the ones a writer who
   * read that version has not seen), oldest first: the newest `limit` of
   * them, and whether older ones were left out. A record's versions grow
   * with its commit order, so they are the top of its timeline: one range
   * scan of `limit + 1` rows, however long the timeline.
   */
  const since = (
    workspace: Workspace,
    businessObject: string,
    businessObjectId: string,
    version: number,
    limit: number
  ) =>
    Effect.gen(function* () {
      const rows = yield* sql<Row & { readonly recordVersion: string | null }>`
        SELECT ${columns}, e.record_version::text AS record_version
        FROM ${sql(workspace.table("audit_entries"))} AS e
        WHERE e.business_object = ${businessObject} AND e.business_object_id = ${businessObjectId}
        ORDER BY e.seq DESC
        LIMIT ${limit + 1}`
      const boundary = rows.findIndex((row) => row.recordVersion === null || Number(row.recordVersion) <= version)
      const newer = boundary === -1 ? rows : rows.slice(0, boundary)
      return {
        entries: newer
          .slice(0, limit)
          .reverse()
          .map(({ recordVersion: _version, ...row }) => toEntry(row)),
        moreEntries: newer.length > limit
      }
    }).pipe(Effect.orDie)

  return { page, compiledQuery, since } as const
})

/**
 * Reads one record's timeline, newest first, a page at a time. The order is
 * `seq` descending: the record's commit order, not the order of `at` (the
 * time each unit began; see docs/audit.md, "Order"). The WHERE clause and
 * ORDER BY follow the `audit_entries_timeline` index exactly, so a page is
 * one index range scan with no sort, as cheap at page 200 as at page 1.
 */
export class Timeline extends Context.Service<Timeline, Effect.Success<typeof make>>()("Timeline") {
  static readonly layer = Layer.effect(Timeline, make)
}
