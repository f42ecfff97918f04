import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { CurrentUnit } from "../unitOfWork/CurrentUnit"

/**
 * Exactly-once effects over at-least-once delivery. The persisted queue marks
 * an element done in its own statement after the handler's unit committed; a
 * crash between the two hands the element out again. So each run first claims
 * its id in the unit's own transaction: a run that finds its claim committed
 * already does nothing, and a rolled-back run leaves no claim.
 */
export const claimRun = (id: string, kind: "job" | "workflow", name: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const { workspace } = yield* CurrentUnit
    const rows = yield* sql`INSERT INTO ${sql(workspace.table("completed_runs"))} ${sql.insert({ id, kind, name })}
      ON CONFLICT (id) DO NOTHING RETURNING id`
    return rows.length === 1
  }).pipe(Effect.orDie)
