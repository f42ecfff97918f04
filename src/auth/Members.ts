import { SqlClient } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import { Conflict, Forbidden, NotFound, UnprocessableEntity } from "../api/errors"
import { Member, MemberList } from "../api/MembersApi"
import type { Principal } from "../api/Principal"
import type { Workspace } from "../api/Workspace"
import { BroadcastBus } from "../broadcast/BroadcastBus"
import { revokeStreams } from "../broadcast/revokeStreams"
import { Caches } from "../cache/Caches"
import { PrimaryReadSqlClient } from "../db/Database"
import { orDieOnSqlError } from "../db/orDieOnSqlError"
import { excerpt } from "../messages/inputExcerpt"
import { platformSchema } from "../tenancy/migrations/platform"
import { Sessions } from "./Sessions"

/** The built-in role that holds every grant and may manage members. */
export const adminRole = "admin"

/** User ids are UUIDs: anything else names no member (and must not reach a uuid cast). */
const userIdPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const MemberRow = Schema.Struct({
  userId: Schema.String,
  email: Schema.String,
  name: Schema.String,
  roles: Schema.Array(Schema.String)
})

/**
 * Who belongs to a workspace and which role they hold, changed by its
 * admins. Each change runs in one transaction that first locks the
 * workspace's `admin` role row, so two admins demoting each other at once
 * cannot leave the workspace without one; after COMMIT it invalidates the
 * member's cached sessions and grants and ends their open broadcast streams,
 * on every instance.
 */
export class Members extends Context.Service<Members>()("Members", {
  make: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const read = yield* PrimaryReadSqlClient
    const sessions = yield* Sessions
    const bus = yield* BroadcastBus
    const caches = yield* Caches
    const memberships = sql(`${platformSchema}.memberships`)
    const users = sql(`${platformSchema}.users`)
    const assignments = (workspace: Workspace) => sql(workspace.table("role_assignments"))

    const holdsAdmin = (client: SqlClient.SqlClient, principal: Principal) =>
      client`SELECT 1 FROM ${assignments(principal.workspace)}
        WHERE principal_kind = ${principal.kind} AND principal_id = ${principal.id} AND role = ${adminRole}`.pipe(
        Effect.map((rows) => rows.length > 0)
      )

    const notAdmin = (principal: Principal) =>
      new Forbidden({ message: `${principal.kind} ${principal.name} is not an admin of this workspace` })

    /** Fails with 403 unless the principal (a user, a key, an agent) holds the workspace's admin role. */
    const requireAdmin = (principal: Principal) =>
      Effect.gen(function* () {
        if (!(yield* holdsAdmin(read, principal).pipe(Effect.orDie))) return yield* notAdmin(principal)
      })

    const rowsOf = (client: SqlClient.SqlClient, workspace: Workspace, userId?: string) =>
      client`SELECT u.id::text AS user_id, u.email, u.name,
            COALESCE(array_agg(a.role ORDER BY a.role) FILTER (WHERE a.role IS NOT NULL), '{}') AS roles
          FROM ${memberships} m
          JOIN ${users} u ON u.id = m.user_id
          LEFT JOIN ${assignments(workspace)} a ON a.principal_kind = 'user' AND a.principal_id = u.id::text
          WHERE m.workspace_id = ${workspace.id} ${userId === undefined ? sql.literal("") : sql`AND m.user_id = ${userId}`}
          GROUP BY u.id ORDER BY u.email`.pipe(Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(MemberRow))))

    const list = (workspace: Workspace) =>
      rowsOf(read, workspace).pipe(
        Effect.map((rows) => new MemberList({ members: rows.map((row) => new Member(row)) })),
        Effect.orDie
      )

    /**
     * In the caller's transaction: locks the admin role (every member change
     * of the workspace queues here); then, when an admin asks (`by`: the API;
     * the CLI is the operator), checks that they still are one (403), so that
     * one demoted meanwhile can no longer act; then locks the member's row (404
     * when the user is not a member). Returns the member as they are now.
     */
    const lockMember = (workspace: Workspace, userId: string, by: Principal | undefined) =>
      Effect.gen(function* () {
        yield* sql`SELECT name FROM ${sql(workspace.table("roles"))} WHERE name = ${adminRole} FOR UPDATE`
        if (by !== undefined && !(yield* holdsAdmin(sql, by))) return yield* notAdmin(by)
        const notMember = new NotFound({ message: `no member ${excerpt(userId)} in this workspace` })
        if (!userIdPattern.test(userId)) return yield* notMember
        const locked = yield* sql`SELECT 1 FROM ${memberships}
          WHERE workspace_id = ${workspace.id} AND user_id = ${userId} FOR UPDATE`
        const [member] = locked.length === 0 ? [] : yield* rowsOf(sql, workspace, userId)
        if (member === undefined) return yield* notMember
        return member
      })

    /** 409 when the member is the workspace's last admin (a user member holding the admin role). */
    const keepAnAdmin = (workspace: Workspace, member: typeof MemberRow.Type, what: string) =>
      Effect.gen(function* () {
        if (!member.roles.includes(adminRole)) return
        const [row] = yield* sql`SELECT count(*)::int AS admins FROM ${assignments(workspace)} a
          JOIN ${memberships} m ON m.user_id::text = a.principal_id AND m.workspace_id = ${workspace.id}
          WHERE a.principal_kind = 'user' AND a.role = ${adminRole}`
        const admins = Number(row?.admins ?? 0)
        if (admins <= 1) {
          return yield* new Conflict({
            message: `${member.email} is the last admin of this workspace: make another member admin before you ${what}`
          })
        }
      })

    /**
     * Removes a member (asked by an admin `by`, or by the operator): their role assignments, their membership and their
     * sessions in this workspace (so a later re-admission revives none of
     * them); then their open streams in this workspace end.
     */
    const remove = (workspace: Workspace, userIdInput: string, by?: Principal) =>
      Effect.gen(function* () {
        const userId = userIdInput.toLowerCase()
        const member = yield* Effect.gen(function* () {
          const member = yield* lockMember(workspace, userId, by)
          yield* keepAnAdmin(workspace, member, "remove them")
          yield* sql`DELETE FROM ${assignments(workspace)} WHERE principal_kind = 'user' AND principal_id = ${userId}`
          yield* sql`DELETE FROM ${memberships} WHERE workspace_id = ${workspace.id} AND user_id = ${userId}`
          yield* sessions.endIn(userId, workspace.id)
          return member
        }).pipe(sql.withTransaction, orDieOnSqlError, Effect.catchTag("SchemaError", Effect.die))
        yield* caches.invalidate({ _tag: "Member", workspaceId: workspace.id, userId })
        yield* revokeStreams(bus, {
          _tag: "User",
          userIds: [userId],
          workspaceId: workspace.id,
          reason: "membership-changed"
        })
        return new Member(member)
      })

    /** Makes a member hold exactly `role` (a role of the workspace: 422 otherwise); their open streams end if it changed. */
    const setRole = (workspace: Workspace, userIdInput: string, role: string, by?: Principal) =>
      Effect.gen(function* () {
        const userId = userIdInput.toLowerCase()
        const outcome = yield* Effect.gen(function* () {
          const member = yield* lockMember(workspace, userId, by)
          const known = yield* sql`SELECT 1 FROM ${sql(workspace.table("roles"))} WHERE name = ${role}`
          if (known.length === 0) {
            return yield* new UnprocessableEntity({ message: `this workspace has no role ${excerpt(role)}` })
          }
          if (member.roles.length === 1 && member.roles[0] === role) return { member, changed: false }
          if (role !== adminRole) yield* keepAnAdmin(workspace, member, "take the admin role from them")
          yield* sql`DELETE FROM ${assignments(workspace)} WHERE principal_kind = 'user' AND principal_id = ${userId}`
          yield* sql`INSERT INTO ${assignments(workspace)} ${sql.insert({ principalKind: "user", principalId: userId, role })}`
          return { member: { ...member, roles: [role] }, changed: true }
        }).pipe(sql.withTransaction, orDieOnSqlError, Effect.catchTag("SchemaError", Effect.die))
        if (outcome.changed) {
          yield* caches.invalidate({ _tag: "Member", workspaceId: workspace.id, userId })
          yield* revokeStreams(bus, {
            _tag: "User",
            userIds: [userId],
            workspaceId: workspace.id,
            reason: "role-changed"
          })
        }
        return new Member(outcome.member)
      })

    /**
     * Makes a user a member holding `role` (besides the roles they hold
     * already); a member who was one already may now read more: their open
     * streams end.
     */
    const add = (workspace: Workspace, userId: string, role: string) =>
      Effect.gen(function* () {
        const assigned = yield* Effect.gen(function* () {
          const known = yield* sql`SELECT 1 FROM ${sql(workspace.table("roles"))} WHERE name = ${role}`
          if (known.length === 0) return yield* new NotFound({ message: `unknown role: ${excerpt(role)}` })
          yield* sql`INSERT INTO ${memberships} ${sql.insert({ workspaceId: workspace.id, userId })} ON CONFLICT DO NOTHING`
          const inserted =
            yield* sql`INSERT INTO ${assignments(workspace)} ${sql.insert({ principalKind: "user", principalId: userId, role })}
            ON CONFLICT DO NOTHING RETURNING role`
          return inserted.length > 0
        }).pipe(sql.withTransaction, orDieOnSqlError)
        // A role held already changes nothing; a new one may let the member read more.
        if (!assigned) return
        yield* caches.invalidate({ _tag: "Member", workspaceId: workspace.id, userId })
        yield* revokeStreams(bus, {
          _tag: "User",
          userIds: [userId],
          workspaceId: workspace.id,
          reason: "role-changed"
        })
      })

    /** The grants of `role` changed (after COMMIT): the open streams of the members holding it end. */
    const roleChanged = (workspace: Workspace, role: string) =>
      Effect.gen(function* () {
        const holders = yield* read`SELECT principal_id FROM ${assignments(workspace)}
          WHERE principal_kind = 'user' AND role = ${role}`.pipe(
          Effect.flatMap(Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ principalId: Schema.String })))),
          Effect.orDie
        )
        if (holders.length === 0) return
        yield* revokeStreams(bus, {
          _tag: "User",
          userIds: holders.map((holder) => holder.principalId),
          workspaceId: workspace.id,
          reason: "role-changed"
        })
      })

    return { requireAdmin, list, add, remove, setRole, roleChanged } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(Sessions.layer))
}
