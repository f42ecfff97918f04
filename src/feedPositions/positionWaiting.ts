import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { schemaNameOf } from "../api/WorkspaceSlug"
import { MissingSalt } from "../chain/commitments"
import { contentHash } from "../chain/rowHash"
import type { RowSalts } from "../chain/rowHash"
import type { StoredLedgerRow } from "../chain/storedRow"
import { ledgerRowColumns, ledgerRowOf } from "../chain/storedRow"
import { positionedChannel } from "./positionCommits"
import type { WaitingUnit } from "./positionRows"
import { lockHead, writePositions } from "./positionRows"

/** Units positioned per transaction by a scan. */
const unitsPerBatch = 500

interface WaitingRow extends StoredLedgerRow {
  readonly salt: string | null
  readonly erasedSalts: Record<string, string> | null
}

const saltsOf = (row: WaitingRow): RowSalts => ({
  salt: row.salt === null ? null : Buffer.from(row.salt, "hex"),
  published: new Map(Object.entries(row.erasedSalts ?? {}).map(([pointer, hex]) => [pointer, Buffer.from(hex, "hex")]))
})

/**
 * A row's content hash recomputed from its columns (as verification does;
 * an erasure keeps it). A row whose values lost their salts by other means
 * than an erasure cannot be hashed: it is chained with a zero hash, so the
 * feed stays whole and verification names the row (`changed`).
 */
const contentOf = (row: WaitingRow) => {
  try {
    return contentHash(ledgerRowOf(row), saltsOf(row))
  } catch (error) {
    if (error instanceof MissingSalt) return Buffer.alloc(32)
    throw error
  }
}

/**
 * Positions every row of the workspace that is committed and still waiting
 * (docs/feed.md, "When the slot is made again"): what a new slot will never
 * deliver (rows committed before it was made, or while none existed), and
 * what an unacknowledged slot would deliver again (the NULL guard then
 * passes it). Order: units by their first row's `seq` (the order their
 * flushes took `seq`: a unit that committed before another began its flush
 * comes first, so each record's rows keep their order), rows by `seq`.
 * Batches of 500 units, each one transaction holding the counter. Returns
 * the rows positioned.
 */
export const positionWaiting = (workspaceId: string, schema: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const table = sql(`${schema}.audit_entries`)
    let total = 0
    // Looked for first without the counter's lock: most of the time nothing waits, and no unit is held up.
    const any = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM (SELECT 1 FROM ${table}
      WHERE position IS NULL LIMIT 1) AS w`
    if ((any[0]?.n ?? 0) === 0) return 0
    for (;;) {
      const n = yield* sql.withTransaction(
        Effect.gen(function* () {
          const head = yield* lockHead(schema)
          const rows = yield* sql<WaitingRow>`WITH units AS (
              SELECT correlation_id, min(seq) AS first FROM ${table} WHERE position IS NULL
              GROUP BY correlation_id ORDER BY first LIMIT ${unitsPerBatch}
            )
            SELECT ${sql.literal(ledgerRowColumns)}, encode(e.salt, 'hex') AS salt, e.erased_salts AS "erasedSalts"
            FROM units AS u JOIN ${table} AS e ON e.correlation_id = u.correlation_id AND e.position IS NULL
            ORDER BY u.first, e.seq`
          const units: Array<{ correlationId: string; rows: Array<WaitingUnit["rows"][number]> }> = []
          for (const row of rows) {
            const last = units[units.length - 1]
            const waiting = { id: row.id, atMicros: BigInt(row.atMicros), content: contentOf(row) }
            if (last !== undefined && last.correlationId === row.correlationId) last.rows.push(waiting)
            else units.push({ correlationId: row.correlationId, rows: [waiting] })
          }
          const written = yield* writePositions(schema, head, units)
          if (written > 0) yield* sql`SELECT 1 AS done FROM pg_notify(${positionedChannel}, ${workspaceId})`
          return written
        })
      )
      total += n
      if (n === 0) return total
    }
  }).pipe(Effect.orDie)

/** `positionWaiting` for every workspace; a workspace dropped meanwhile is passed. */
export const positionAllWaiting = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // A database not migrated yet (the service's first start) has no workspace and nothing waiting.
  const platform = yield* sql<{ t: string | null }>`SELECT to_regclass('platform.workspaces')::text AS t`
  if (platform[0]?.t == null) return 0
  const workspaces = yield* sql<{ id: string; slug: string }>`SELECT id::text AS id, slug FROM platform.workspaces`
  let total = 0
  for (const workspace of workspaces) {
    const schema = schemaNameOf(workspace.slug)
    const exists = yield* sql<{ t: string | null }>`SELECT to_regclass(${`${schema}.feed_position`})::text AS t`
    if (exists[0]?.t == null) continue
    total += yield* positionWaiting(workspace.id, schema)
  }
  return total
}).pipe(Effect.orDie)
