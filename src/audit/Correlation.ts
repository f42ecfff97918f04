import { Context, Effect, Layer, Schema } from "effect"
import { AuditEntry } from "../api/AuditEntry"
import { CorrelationGroup, CorrelationView, correlationMaxRows } from "../api/Feed"
import type { Workspace } from "../api/Workspace"
import { ReadSqlClient } from "../db/Database"
import { entryJson } from "./entryJson"
import { groupByCause } from "./groupByCause"
import { fromJsonText } from "../json/fromJsonText"

interface Row {
  readonly json: string
  readonly correlationId: string
  readonly parentCorrelationId: string | null
}

const decodeEntry = Schema.decodeUnknownEffect(fromJsonText(AuditEntry))

const make = Effect.gen(function* () {
  const sql = yield* ReadSqlClient
  const entryText = entryJson(sql)

  const view = (workspace: Workspace, asked: string, readable: "all" | ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const correlationId = asked.toLowerCase()
      const table = sql(workspace.table("audit_entries"))
      const permitted =
        readable === "all"
          ? sql.literal("true")
          : readable.length === 0
            ? sql.literal("false")
            : sql.in("e.business_object", readable)
      const rows = yield* sql<Row>`
        WITH RECURSIVE story(correlation_id) AS (
          SELECT ${correlationId}::uuid
          UNION
          SELECT e.correlation_id FROM ${table} AS e JOIN story AS s ON e.parent_correlation_id = s.correlation_id
        )
        SELECT ${entryText} AS json, e.correlation_id::text AS correlation_id,
          e.parent_correlation_id::text AS parent_correlation_id
        FROM ${table} AS e
        WHERE e.correlation_id IN (SELECT correlation_id FROM story) AND ${permitted}
        -- seq: each record's commit order, and it is there before the row's feed position (WAL mode).
        ORDER BY e.seq
        LIMIT ${correlationMaxRows + 1}`
      const shown = rows.slice(0, correlationMaxRows)
      const correlated = yield* Effect.forEach(shown, (row) =>
        Effect.map(decodeEntry(row.json), (entry) => ({
          correlationId: row.correlationId,
          // The unit asked for is the root of the story, whatever queued it.
          parentCorrelationId: row.correlationId === correlationId ? null : row.parentCorrelationId,
          cause: entry.cause,
          entry
        }))
      )
      const groups = groupByCause(correlated).map((group) => new CorrelationGroup(group))
      return new CorrelationView({ correlationId, groups, truncated: rows.length > correlationMaxRows })
    }).pipe(Effect.orDie)

  return { view } as const
})

/**
 * One unit of work as a story (docs/feed.md, "Correlation"): its rows and
 * those of its cascade, the units its jobs and workflow runs ran in (each
 * row names the unit that queued its run, `parent_correlation_id`), found
 * by a recursive walk over that link; only rows of business objects the
 * caller may read, at most `correlationMaxRows`, in commit order.
 */
export class Correlation extends Context.Service<Correlation, Effect.Success<typeof make>>()("Correlation") {
  static readonly layer = Layer.effect(Correlation, make)
}
