import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import type { Changes } from "../api/Changes"
import type { RecordValues } from "../api/Json"
import type { Workspace } from "../api/Workspace"
import type { FieldPath } from "../chain/erase"
import { eraseRow } from "../chain/erase"
import { saltsOf } from "./LedgerRows"

/** An audit row as an erasure reads it: its values and the salts they are committed with. */
interface ErasableRow {
  readonly id: string
  readonly record: RecordValues | null
  readonly changes: Changes | null
  readonly salt: string | null
  readonly erasedSalts: Record<string, string> | null
}

/** How much an erasure changed of a record's audit rows. */
export interface ErasedRows {
  /** Rows whose values were erased now. */
  readonly rows: number
  /** Single values erased now, over those rows. */
  readonly values: number
}

/**
 * Inside the erasure's unit, after its own rows are written: every audit row
 * of the record with the values at `paths` (none: every value) replaced by
 * erased markers that keep their commitments (`eraseRow`), its root salt
 * destroyed and the salts of what is left published. Rows are locked in
 * `seq` order (a row may not have its feed position yet, in WAL mode); a row that holds none of the values is left as it is. The
 * permanence trigger lets this one UPDATE through: it is told so for it
 * alone (`abs.audit_erasure`), and it changes only values and salts.
 */
export const eraseAuditRows = (
  workspace: Workspace,
  businessObject: string,
  id: string,
  paths: ReadonlyArray<FieldPath>
) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const table = sql(workspace.table("audit_entries"))
    const rows = yield* sql<ErasableRow>`SELECT e.id::text AS id, e.record, e.changes,
        encode(e.salt, 'hex') AS salt, e.erased_salts AS "erasedSalts"
      FROM ${table} AS e WHERE e.business_object = ${businessObject} AND e.business_object_id = ${id}
      ORDER BY e.seq FOR UPDATE`
    const rewritten: Array<{
      readonly id: string
      readonly record: unknown
      readonly changes: unknown
      readonly erased_salts: Record<string, string>
    }> = []
    let values = 0
    for (const row of rows) {
      const erased = eraseRow(row, saltsOf(row), paths)
      if (erased.erasedNow === 0) continue
      values += erased.erasedNow
      rewritten.push({
        id: row.id,
        record: erased.record,
        changes: erased.changes,
        erased_salts: Object.fromEntries(
          [...erased.published].map(([pointer, salt]) => [pointer, Buffer.from(salt).toString("hex")])
        )
      })
    }
    if (rewritten.length > 0) {
      yield* sql`SET LOCAL abs.audit_erasure = 'on'`
      yield* sql`UPDATE ${table} AS a SET record = c.record, changes = c.changes, salt = NULL,
          erased_salts = c.erased_salts
        FROM jsonb_to_recordset(${JSON.stringify(rewritten)}::jsonb)
          AS c(id uuid, record jsonb, changes jsonb, erased_salts jsonb)
        WHERE a.id = c.id`
      yield* sql`SET LOCAL abs.audit_erasure = 'off'`
    }
    return { rows: rewritten.length, values } satisfies ErasedRows
  }).pipe(Effect.orDie)
