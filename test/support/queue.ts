import { SqlClient } from "effect/sql"
import { Effect, Schema } from "effect"
import type { Actor } from "../../src/api/Actor"
import { queueTable } from "../../src/tenancy/migrations/durableQueue"
import type { Workspace } from "../../src/api/Workspace"
import { freshUser } from "./TestApp"

const QueuedRow = Schema.Struct({
  id: Schema.String,
  completed: Schema.Boolean,
  attempts: Schema.Number,
  lastFailure: Schema.NullOr(Schema.String)
})

/**
 * A workspace's elements in one durable queue, oldest first. `attempts` counts finished runs: Effect 4's
 * queue counts an attempt when it hands the element out, so a run still going (acquired) is not one yet.
 */
export const queuedIn = (queue: string, workspace: Workspace) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql`SELECT id, state = 'completed' AS completed,
      CASE WHEN acquired_by IS NULL THEN attempts ELSE attempts - 1 END AS attempts, last_failure FROM ${sql(queueTable)}
      WHERE queue_name = ${queue} AND (element::jsonb)->'workspace'->>'id' = ${workspace.id}
      ORDER BY sequence`
    return yield* Schema.decodeUnknownEffect(Schema.Array(QueuedRow))(rows)
  }).pipe(Effect.orDie)

/** A new admin of `workspace`, as the actor its writes would name. */
export const freshUserActor = (workspace: Workspace) =>
  Effect.map(
    freshUser({ workspace, role: "admin" }),
    (user): Actor => ({ kind: "user", id: user.id, name: user.name, email: user.email })
  )
