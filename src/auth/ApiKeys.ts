import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Data, Effect, Layer, Option, Schema } from "effect"
import { timingSafeEqual } from "node:crypto"
import { Caches } from "../cache/Caches"
import { cacheTag } from "../cache/cacheTags"
import { PrimaryReadSqlClient } from "../db/Database"
import { orDieOnSqlError } from "../db/orDieOnSqlError"
import { BadRequest, NotFound } from "../api/errors"
import type { Workspace } from "../api/Workspace"
import { Roles } from "./Roles"
import { hashToken, randomToken } from "./Tokens"
import { excerpt } from "../messages/inputExcerpt"

/**
 * An API key reads `ak_<workspace slug>.<key id>.<secret>`: the slug finds the
 * workspace schema, the id the row, and the hash of the whole key must match.
 * Only the hash is stored; the key itself is shown once, at creation.
 */
const uuid = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
const keyPattern = new RegExp(`^ak_([a-z0-9-]+)\\.(${uuid})\\.([A-Za-z0-9_-]{43})$`)
const keyIdPattern = new RegExp(`^${uuid}$`)

export interface ParsedApiKey {
  readonly workspaceSlug: string
  readonly keyId: string
}

export const parseApiKey = (key: string): Option.Option<ParsedApiKey> => {
  const match = keyPattern.exec(key)
  return match?.[1] && match[2] ? Option.some({ workspaceSlug: match[1], keyId: match[2] }) : Option.none()
}

export class ApiKey extends Schema.Class<ApiKey>("ApiKey")({
  id: Schema.String,
  name: Schema.String
}) {}

/**
 * Who a live key speaks for: the service account that is the key itself, or
 * the agent the key was issued to (an agent holds its roles under its own id).
 */
export type KeyHolder =
  | { readonly kind: "service-account"; readonly id: string; readonly name: string; readonly keyId: string }
  | { readonly kind: "agent"; readonly id: string; readonly name: string; readonly keyId: string }

const ApiKeyRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  keyHash: Schema.String,
  agentId: Schema.NullOr(Schema.String),
  agentName: Schema.NullOr(Schema.String)
})

/** An API key as the admin command line lists it: never its secret nor its hash. */
export class ApiKeyListing extends Schema.Class<ApiKeyListing>("ApiKeyListing")({
  id: Schema.String,
  name: Schema.String,
  /** The agent the key signs in as; none for a service account's key (which holds `roles` itself). */
  agent: Schema.NullOr(Schema.String),
  roles: Schema.Array(Schema.String),
  createdAt: Schema.Date,
  revokedAt: Schema.NullOr(Schema.Date)
}) {}

/** A key id in a workspace: compared by value, as a cache key. */
class KeyOf extends Data.Class<{ readonly workspace: Workspace; readonly keyId: string }> {}

const sameHash = (a: string, b: string) => {
  const left = Buffer.from(a, "hex")
  const right = Buffer.from(b, "hex")
  return left.length === right.length && timingSafeEqual(left, right)
}

/** Service-account credentials of one workspace. The key's id is the service account's id. */
export class ApiKeys extends Context.Service<ApiKeys>()("ApiKeys", {
  make: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const read = yield* PrimaryReadSqlClient
    const roles = yield* Roles
    const caches = yield* Caches

    const insertKey = (workspace: Workspace, name: string, agentId: string | null) =>
      Effect.gen(function* () {
        const trimmed = name.trim()
        if (trimmed.length === 0 || trimmed.length > 200) {
          return yield* new BadRequest({ message: "an API key's name is 1-200 characters" })
        }
        const id = crypto.randomUUID()
        const key = `ak_${workspace.slug}.${id}.${randomToken()}`
        yield* sql`INSERT INTO ${sql(workspace.table("api_keys"))} ${sql.insert({ id, name: trimmed, keyHash: hashToken(key), agentId })}`.pipe(
          Effect.orDie
        )
        return { apiKey: new ApiKey({ id, name: trimmed }), key }
      })

    /** Creates a key holding `role`; returns the key, which is never shown again. */
    const create = (workspace: Workspace, name: string, role: string) =>
      Effect.gen(function* () {
        const created = yield* insertKey(workspace, name, null)
        yield* roles.assign(workspace, { kind: "service-account", id: created.apiKey.id }, role)
        return created
      }).pipe(sql.withTransaction, orDieOnSqlError)

    /** Issues a key an agent signs in with; the agent's own roles apply, the key holds none. */
    const createForAgent = (workspace: Workspace, agent: { readonly id: string; readonly name: string }) =>
      insertKey(workspace, `key of agent ${agent.name}`, agent.id)

    const revoke = (workspace: Workspace, id: string) =>
      Effect.gen(function* () {
        if (!keyIdPattern.test(id)) return yield* new BadRequest({ message: `invalid API key id: ${excerpt(id)}` })
        const rows = yield* sql`UPDATE ${sql(workspace.table("api_keys"))} SET revoked_at = now()
          WHERE id = ${id} AND revoked_at IS NULL RETURNING id`.pipe(Effect.orDie)
        if (rows.length === 0) return yield* new NotFound({ message: `no active API key ${excerpt(id)}` })
        yield* caches.invalidate({ _tag: "ApiKey", keyId: id })
      })

    const liveKey = yield* caches.make({
      lookup: ({ keyId, workspace }: KeyOf) =>
        SqlSchema.findOneOption({
          Request: Schema.String,
          Result: ApiKeyRow,
          execute: (id) => read`SELECT k.id, k.name, k.key_hash, a.id AS agent_id, a.name AS agent_name
            FROM ${sql(workspace.table("api_keys"))} k
            LEFT JOIN ${sql(workspace.table("agents"))} a ON a.id = k.agent_id
            WHERE k.id = ${id} AND k.revoked_at IS NULL`
        })(keyId).pipe(Effect.orDie),
      tags: ({ keyId, workspace }) => [cacheTag.apiKey(keyId), cacheTag.workspace(workspace.id)],
      keep: Option.isSome
    })

    /** Who the key speaks for, if the key is live and matches; none otherwise. */
    const verify = (workspace: Workspace, keyId: string, key: string) =>
      liveKey
        .get(new KeyOf({ workspace, keyId }))
        .pipe(
          Effect.map(Option.filter((row) => sameHash(row.keyHash, hashToken(key)))),
          Effect.map(
            Option.map(
              (row): KeyHolder =>
                row.agentId !== null && row.agentName !== null
                  ? { kind: "agent", id: row.agentId, name: row.agentName, keyId: row.id }
                  : { kind: "service-account", id: row.id, name: row.name, keyId: row.id }
            )
          )
        )

    /** Every key of the workspace, revoked ones too, oldest first. */
    const list = (workspace: Workspace) =>
      SqlSchema.findAll({
        Request: Schema.Void,
        Result: ApiKeyListing,
        execute: () => read`SELECT k.id, k.name, a.name AS agent, k.created_at, k.revoked_at,
            COALESCE(array_agg(r.role ORDER BY r.role) FILTER (WHERE r.role IS NOT NULL), '{}') AS roles
          FROM ${sql(workspace.table("api_keys"))} k
          LEFT JOIN ${sql(workspace.table("agents"))} a ON a.id = k.agent_id
          LEFT JOIN ${sql(workspace.table("role_assignments"))} r
            ON r.principal_kind = 'service-account' AND r.principal_id = k.id::text
          GROUP BY k.id, a.name ORDER BY k.created_at, k.id`
      })(undefined).pipe(Effect.orDie)

    return { create, createForAgent, revoke, verify, list } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(Roles.layer))
}
