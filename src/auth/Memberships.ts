import { SqlClient } from "effect/sql"
import { PrimaryReadSqlClient } from "../db/Database"
import { Context, Effect, Layer } from "effect"
import { platformSchema } from "../tenancy/migrations/platform"

/** Which users belong to which workspaces. A user signs in to a workspace only as its member. */
export class Memberships extends Context.Service<Memberships>()("Memberships", {
  make: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const read = yield* PrimaryReadSqlClient
    const memberships = sql(`${platformSchema}.memberships`)

    const add = (workspaceId: string, userId: string) =>
      sql`INSERT INTO ${memberships} ${sql.insert({ workspaceId, userId })} ON CONFLICT DO NOTHING`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const isMember = (workspaceId: string, userId: string) =>
      read`SELECT 1 FROM ${memberships} WHERE workspace_id = ${workspaceId} AND user_id = ${userId}`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    return { add, isMember } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
