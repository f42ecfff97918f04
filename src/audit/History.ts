import { Context, Effect, Layer, Option } from "effect"
import type { AuditEntry } from "../api/AuditEntry"
import type { AsOfPoint } from "../api/RecordHistory"
import type { Workspace } from "../api/Workspace"
import { ReadSqlClient } from "../db/Database"
import type { HistoryRow } from "./replay"

/** A row as the query returns it (written by this service; its CHECKs hold the verb rules). */
interface Row {
  readonly id: string
  readonly at: string
  readonly actor: AuditEntry["actor"]
  readonly operation: AuditEntry["operation"]
  readonly recordVersion: string | null
  readonly record: AuditEntry["record"] | null
  readonly changes: AuditEntry["changes"] | null
}

const toHistoryRow = ({ recordVersion, record, changes, ...row }: Row): HistoryRow => ({
  ...row,
  recordVersion: recordVersion === null ? null : Number(recordVersion),
  ...(record === null ? {} : { record }),
  ...(changes === null ? {} : { changes })
})

/** No bigint is larger: "every row". */
const lastSeq = "9223372036854775807"

const make = Effect.gen(function* () {
  const sql = yield* ReadSqlClient
  const columns = sql.literal(`e.id::text AS id,
            to_char(e.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at,
            e.actor, e.operation, e.record_version::text AS record_version, e.record, e.changes`)

  const rowsUpTo = (workspace: Workspace, businessObject: string, id: string, seq: string) =>
    sql<Row>`SELECT ${columns} FROM ${sql(workspace.table("audit_entries"))} AS e
      WHERE e.business_object = ${businessObject} AND e.business_object_id = ${id} AND e.seq <= ${seq}::bigint
      ORDER BY e.seq`.pipe(Effect.map((rows) => rows.map(toHistoryRow)))

  /** The `seq` of entry `entry` on this record's timeline; none when it is not one of its entries. */
  const seqOfEntry = (workspace: Workspace, businessObject: string, id: string, entry: string) =>
    Effect.map(
      sql<{ readonly seq: string }>`SELECT e.seq::text AS seq FROM ${sql(workspace.table("audit_entries"))} AS e
        WHERE e.id = ${entry}::uuid AND e.business_object = ${businessObject} AND e.business_object_id = ${id}`,
      (rows) => Option.fromNullishOr(rows[0]?.seq)
    )

  /**
   * The last `seq` of the rows standing at `at`: those before the first row
   * (in commit order) whose `at` is later. `at` is when a unit began, and
   * a unit that waited on the record's lock commits after a later-begun one:
   * cutting at the first later row keeps every row shown at or before `at`.
   */
  const seqAtInstant = (workspace: Workspace, businessObject: string, id: string, at: string) =>
    Effect.map(
      sql<{ readonly seq: string | null }>`SELECT (min(e.seq) - 1)::text AS seq
        FROM ${sql(workspace.table("audit_entries"))} AS e
        WHERE e.business_object = ${businessObject} AND e.business_object_id = ${id} AND e.at > ${at}::timestamptz`,
      (rows) => rows[0]?.seq ?? lastSeq
    )

  /**
   * The record's rows, oldest first, up to `point`: through entry `point`
   * (none: it is not an entry of this record), or as they stood at an instant.
   */
  const until = (workspace: Workspace, businessObject: string, id: string, point: AsOfPoint) =>
    Effect.gen(function* () {
      const seq =
        point._tag === "Entry"
          ? yield* seqOfEntry(workspace, businessObject, id, point.entry)
          : Option.some(yield* seqAtInstant(workspace, businessObject, id, point.at))
      if (Option.isNone(seq)) return Option.none<ReadonlyArray<HistoryRow>>()
      return Option.some(yield* rowsUpTo(workspace, businessObject, id, seq.value))
    }).pipe(Effect.orDie)

  /** Every row of the record's timeline, oldest first. */
  const all = (workspace: Workspace, businessObject: string, id: string) =>
    rowsUpTo(workspace, businessObject, id, lastSeq).pipe(Effect.orDie)

  return { until, all } as const
})

/**
 * A record's timeline read oldest first, for rebuilding it (docs/history.md):
 * one range scan of the `audit_entries_timeline` index, up to a bound. Inside
 * a unit of work it joins the unit's transaction, so a revert reads the rows
 * under the record's lock.
 */
export class History extends Context.Service<History, Effect.Success<typeof make>>()("History") {
  static readonly layer = Layer.effect(History, make)
}
