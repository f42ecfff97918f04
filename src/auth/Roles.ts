import { SqlClient, SqlSchema } from "effect/sql"
import { PrimaryReadSqlClient } from "../db/Database"
import { orDieOnSqlError } from "../db/orDieOnSqlError"
import { Context, Data, Effect, Layer, Schema } from "effect"
import { Caches } from "../cache/Caches"
import { cacheTag } from "../cache/cacheTags"
import { BadRequest, NotFound } from "../api/errors"
import type { Workspace } from "../api/Workspace"
import { GrantTarget, Permission } from "./Grants"
import type { Grant } from "./Grants"
import type { PrincipalKind } from "../api/Principal"
import { excerpt } from "../messages/inputExcerpt"

const RoleName = Schema.String.check(
  Schema.isPattern(/^[a-z][a-z0-9-]{0,62}$/, { message: "a role name is lower-case letters, digits and hyphens" })
)

const badRequest = (error: Schema.SchemaError) => new BadRequest({ message: error.message })

const GrantRow = Schema.Struct({ businessObject: Schema.String, permission: Permission })

/** A principal in a workspace: compared by value, as a cache key. */
class GrantsKey extends Data.Class<{
  readonly workspace: Workspace
  readonly kind: PrincipalKind
  readonly id: string
}> {}

/** Roles hold grants per business object; users, service accounts and agents hold roles. */
export class Roles extends Context.Service<Roles>()("Roles", {
  make: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const read = yield* PrimaryReadSqlClient
    const caches = yield* Caches

    /**
     * Adds a grant to a role, creating the role if it is new. Granting twice
     * changes nothing. Commits, then invalidates the workspace's cached grants.
     */
    const grant = (workspace: Workspace, role: string, businessObject: string, permission: string) =>
      Effect.gen(function* () {
        const name = yield* Schema.decodeUnknownEffect(RoleName)(role).pipe(Effect.mapError(badRequest))
        const target = yield* Schema.decodeUnknownEffect(GrantTarget)(businessObject).pipe(Effect.mapError(badRequest))
        const perm = yield* Schema.decodeUnknownEffect(Permission)(permission).pipe(Effect.mapError(badRequest))
        yield* sql`INSERT INTO ${sql(workspace.table("roles"))} ${sql.insert({ name })} ON CONFLICT DO NOTHING`
        yield* sql`INSERT INTO ${sql(workspace.table("role_grants"))} ${sql.insert({ role: name, businessObject: target, permission: perm })}
          ON CONFLICT DO NOTHING`
      }).pipe(
        sql.withTransaction,
        orDieOnSqlError,
        Effect.tap(() => caches.invalidate({ _tag: "Role", workspaceId: workspace.id }))
      )

    /**
     * Gives a principal a role that must already exist. Joins the caller's
     * transaction: the invalidation that follows is right only outside one,
     * or for a principal made in it (a new key or agent, never cached).
     */
    const assign = (workspace: Workspace, principal: { kind: PrincipalKind; id: string }, role: string) =>
      Effect.gen(function* () {
        const exists = yield* sql`SELECT 1 FROM ${sql(workspace.table("roles"))} WHERE name = ${role}`
        if (exists.length === 0) return yield* new NotFound({ message: `unknown role: ${excerpt(role)}` })
        yield* sql`INSERT INTO ${sql(workspace.table("role_assignments"))} ${sql.insert({
          principalKind: principal.kind,
          principalId: principal.id,
          role
        })} ON CONFLICT DO NOTHING`
        yield* caches.invalidate({
          _tag: "Principal",
          workspaceId: workspace.id,
          kind: principal.kind,
          id: principal.id
        })
      }).pipe(orDieOnSqlError)

    const readGrants = (key: GrantsKey) =>
      SqlSchema.findAll({
        Request: Schema.Struct({ kind: Schema.String, id: Schema.String }),
        Result: GrantRow,
        execute: ({ id, kind }) => read`SELECT DISTINCT g.business_object, g.permission
            FROM ${sql(key.workspace.table("role_assignments"))} a
            JOIN ${sql(key.workspace.table("role_grants"))} g ON g.role = a.role
            WHERE a.principal_kind = ${kind} AND a.principal_id = ${id}`
      })(key).pipe(
        Effect.map((rows): ReadonlyArray<Grant> => rows),
        Effect.orDie
      )

    const cached = yield* caches.make({
      lookup: readGrants,
      tags: ({ id, kind, workspace }: GrantsKey) => [
        cacheTag.principal(workspace.id, kind, id),
        cacheTag.grants(workspace.id),
        cacheTag.workspace(workspace.id),
        ...(kind === "user" ? [cacheTag.member(workspace.id, id)] : [])
      ]
    })

    /** Every grant a principal holds through its roles. */
    const grantsOf = (workspace: Workspace, principal: { kind: PrincipalKind; id: string }) =>
      cached.get(new GrantsKey({ workspace, kind: principal.kind, id: principal.id }))

    return { grant, assign, grantsOf } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
