import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { ApiKeys } from "../auth/ApiKeys"
import { Roles } from "../auth/Roles"
import { BadRequest } from "../api/errors"
import type { Workspace } from "../api/Workspace"
import { orDieOnSqlError } from "../db/orDieOnSqlError"

export class Agent extends Schema.Class<Agent>("Agent")({
  id: Schema.String,
  name: Schema.String
}) {}

/** An agent as the admin command line lists it: its roles and how many of its keys are live. */
export class AgentListing extends Schema.Class<AgentListing>("AgentListing")({
  id: Schema.String,
  name: Schema.String,
  roles: Schema.Array(Schema.String),
  activeKeys: Schema.Number
}) {}

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/**
 * Agents of a workspace: principals of their own, holding roles under their
 * id. An agent working alone signs in with its own key and writes as itself,
 * within its own grants; in a chat turn it works for the user instead.
 */
export class Agents extends Context.Service<Agents>()("Agents", {
  make: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const apiKeys = yield* ApiKeys
    const roles = yield* Roles

    /** A new agent holding `role`, and its first key (shown only now). */
    const create = (workspace: Workspace, name: string, role: string) =>
      Effect.gen(function* () {
        const trimmed = name.trim()
        if (trimmed.length === 0 || trimmed.length > 200) {
          return yield* new BadRequest({ message: "an agent's name is 1-200 characters" })
        }
        const agent = yield* SqlSchema.findOne({
          Request: Schema.String,
          Result: Agent,
          execute: (name) =>
            sql`INSERT INTO ${sql(workspace.table("agents"))} ${sql.insert({ name })} RETURNING id, name`
        })(trimmed).pipe(Effect.orDie)
        yield* roles.assign(workspace, { kind: "agent", id: agent.id }, role)
        const { key } = yield* apiKeys.createForAgent(workspace, agent)
        return { agent, key }
      }).pipe(sql.withTransaction, orDieOnSqlError)

    const find = (workspace: Workspace, id: string) =>
      uuidPattern.test(id)
        ? SqlSchema.findOneOption({
            Request: Schema.String,
            Result: Agent,
            execute: (id) => sql`SELECT id, name FROM ${sql(workspace.table("agents"))} WHERE id = ${id}`
          })(id).pipe(Effect.orDie)
        : Effect.succeed(Option.none<Agent>())

    /** Every agent of the workspace, by name. */
    const list = (workspace: Workspace) =>
      SqlSchema.findAll({
        Request: Schema.Void,
        Result: AgentListing,
        execute: () => sql`SELECT a.id, a.name,
            COALESCE((SELECT array_agg(r.role ORDER BY r.role) FROM ${sql(workspace.table("role_assignments"))} r
              WHERE r.principal_kind = 'agent' AND r.principal_id = a.id::text), '{}') AS roles,
            (SELECT count(*)::int FROM ${sql(workspace.table("api_keys"))} k
              WHERE k.agent_id = a.id AND k.revoked_at IS NULL) AS active_keys
          FROM ${sql(workspace.table("agents"))} a ORDER BY a.name, a.id`
      })(undefined).pipe(Effect.orDie)

    return { create, find, list } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide([ApiKeys.layer, Roles.layer]))
}
