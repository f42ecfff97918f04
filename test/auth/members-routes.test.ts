import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Roles } from "../../src/auth/Roles"
import { platformSchema } from "../../src/tenancy/migrations/platform"
import { baseUrl, freshUser, freshWorkspace, TestApp, testPassword } from "../support/TestApp"
import { bearerClient, expectStatus, signedInMember } from "../support/api"
import type { Client } from "../support/api"
import { runCli } from "../support/cli"
import { request, signIn } from "../support/http"

const refusal = (tag: string) => expect.objectContaining({ _tag: tag, message: expect.any(String) })

/** What the workspace's tables say about a member: their roles, whether they belong, their sessions there. */
const stateOf = (workspace: Workspace, userId: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const roles = yield* sql<{ role: string }>`SELECT role FROM ${sql(workspace.table("role_assignments"))}
      WHERE principal_kind = 'user' AND principal_id = ${userId} ORDER BY role`
    const memberships = yield* sql`SELECT 1 FROM ${sql(`${platformSchema}.memberships`)}
      WHERE workspace_id = ${workspace.id} AND user_id = ${userId}`
    const sessions = yield* sql`SELECT 1 FROM ${sql(`${platformSchema}.sessions`)}
      WHERE workspace_id = ${workspace.id} AND user_id = ${userId}`
    return { roles: roles.map((row) => row.role), member: memberships.length > 0, sessions: sessions.length }
  }).pipe(Effect.orDie)

const members = (client: Client) =>
  Effect.map(
    client.get("/api/members"),
    (r) => expectStatus(200)(r) as { members: ReadonlyArray<{ userId: string; roles: ReadonlyArray<string> }> }
  )

layer(TestApp, { excludeTestServices: true })("member routes: admins remove members and set their role", (it) => {
  it.effect("an admin lists the members with their roles; a member who is not an admin gets 403", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      yield* (yield* Roles).grant(workspace, "sales", "crm/deal", "update")
      const { client: admin, user: adminUser } = yield* signedInMember(base, workspace)
      const { client: seller, user: sellerUser } = yield* signedInMember(base, workspace, "sales")
      const listed = yield* members(admin)
      expect([...listed.members].sort((x, y) => x.userId.localeCompare(y.userId))).toEqual(
        [
          { userId: adminUser.id, email: adminUser.email, name: adminUser.name, roles: ["admin"] },
          { userId: sellerUser.id, email: sellerUser.email, name: sellerUser.name, roles: ["sales"] }
        ].sort((x, y) => x.userId.localeCompare(y.userId))
      )
      const refused = yield* seller.get("/api/members")
      expect(refused.status).toBe(403)
      expect(refused.body).toEqual(refusal("Forbidden"))
    })
  )

  it.effect("403 for a member who is not an admin: nothing changes", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      yield* (yield* Roles).grant(workspace, "sales", "crm/deal", "update")
      const { user: adminUser } = yield* signedInMember(base, workspace)
      const { client: seller, user: sellerUser } = yield* signedInMember(base, workspace, "sales")
      for (const response of [
        yield* seller.del(`/api/members/${adminUser.id}`),
        yield* seller.put(`/api/members/${adminUser.id}/role`, { role: "sales" }),
        yield* seller.put(`/api/members/${sellerUser.id}/role`, { role: "admin" })
      ]) {
        expect(response.status).toBe(403)
        expect(response.body).toEqual(refusal("Forbidden"))
      }
      expect(yield* stateOf(workspace, adminUser.id)).toEqual({ roles: ["admin"], member: true, sessions: 1 })
      expect(yield* stateOf(workspace, sellerUser.id)).toEqual({ roles: ["sales"], member: true, sessions: 1 })
    })
  )

  it.effect(
    "404 for a user who is not a member: unknown id, not an id, a member of another workspace; 422 for an unknown role",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const other = yield* freshWorkspace
        const { client: admin, user: adminUser } = yield* signedInMember(base, workspace)
        const outsider = yield* freshUser({ workspace: other, role: "admin" })
        for (const id of [crypto.randomUUID(), "not-a-user", outsider.id, "__proto__"]) {
          for (const response of [
            yield* admin.del(`/api/members/${encodeURIComponent(id)}`),
            yield* admin.put(`/api/members/${encodeURIComponent(id)}/role`, { role: "admin" })
          ]) {
            expect(response.status).toBe(404)
            expect(response.body).toEqual(refusal("NotFound"))
          }
        }
        const { user } = yield* signedInMember(base, workspace, "admin")
        const unknownRole = yield* admin.put(`/api/members/${user.id}/role`, { role: "no-such-role" })
        expect(unknownRole.status).toBe(422)
        expect(unknownRole.body).toEqual(refusal("UnprocessableEntity"))
        const noRole = yield* admin.put(`/api/members/${user.id}/role`, {})
        expect(noRole.status).toBe(400)
        expect(yield* stateOf(workspace, user.id)).toEqual({ roles: ["admin"], member: true, sessions: 1 })
        expect(yield* stateOf(other, outsider.id)).toEqual({ roles: ["admin"], member: true, sessions: 0 })
        expect(yield* stateOf(workspace, adminUser.id)).toMatchObject({ member: true })
      })
  )

  it.effect("409 for the last admin: they can be neither removed nor demoted; with a second admin they can", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      yield* (yield* Roles).grant(workspace, "sales", "crm/deal", "update")
      const { client: admin, user: adminUser } = yield* signedInMember(base, workspace)
      const removeSelf = yield* admin.del(`/api/members/${adminUser.id}`)
      expect(removeSelf.status).toBe(409)
      expect(removeSelf.body).toEqual(refusal("Conflict"))
      const demoteSelf = yield* admin.put(`/api/members/${adminUser.id}/role`, { role: "sales" })
      expect(demoteSelf.status).toBe(409)
      // Setting the role a member holds already changes nothing, and is no refusal.
      expect(expectStatus(200)(yield* admin.put(`/api/members/${adminUser.id}/role`, { role: "admin" }))).toMatchObject(
        { roles: ["admin"] }
      )
      expect(yield* stateOf(workspace, adminUser.id)).toEqual({ roles: ["admin"], member: true, sessions: 1 })

      // An API key holding the admin role is no member: it does not count as the workspace's admin.
      const { key } = yield* (yield* ApiKeys).create(workspace, "admin key", "admin")
      const byKey = yield* bearerClient(base, key).del(`/api/members/${adminUser.id}`)
      expect(byKey.status).toBe(409)

      const { user: second } = yield* signedInMember(base, workspace)
      expectStatus(200)(yield* admin.put(`/api/members/${adminUser.id}/role`, { role: "sales" }))
      expect(yield* stateOf(workspace, adminUser.id)).toEqual({ roles: ["sales"], member: true, sessions: 1 })
      // Now the second is the last admin.
      expect((yield* bearerClient(base, key).del(`/api/members/${second.id}`)).status).toBe(409)
    })
  )

  it.effect(
    "two admins demoting each other at once: one succeeds, the other is no admin by then (403), one admin is left (three rounds)",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        for (let round = 0; round < 3; round++) {
          const workspace = yield* freshWorkspace
          yield* (yield* Roles).grant(workspace, "sales", "crm/deal", "update")
          const one = yield* signedInMember(base, workspace)
          const two = yield* signedInMember(base, workspace)
          const answers = yield* Effect.all(
            [
              one.client.put(`/api/members/${two.user.id}/role`, { role: "sales" }),
              two.client.put(`/api/members/${one.user.id}/role`, { role: "sales" })
            ],
            { concurrency: 2 }
          )
          expect(answers.map((answer) => answer.status).sort()).toEqual([200, 403])
          const roles = [(yield* stateOf(workspace, one.user.id)).roles, (yield* stateOf(workspace, two.user.id)).roles]
          expect(roles.filter((held) => held.includes("admin"))).toHaveLength(1)
        }
      })
  )

  it.effect("removing a member takes their roles and sessions in this workspace; a re-admission revives neither", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const other = yield* freshWorkspace
      const { client: admin } = yield* signedInMember(base, workspace)
      const { user, cookie } = yield* signedInMember(base, workspace)
      // Their membership of another workspace, and its session, stay.
      yield* (yield* Roles).assign(other, { kind: "user", id: user.id }, "admin")
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO ${sql(`${platformSchema}.memberships`)} ${sql.insert({ workspaceId: other.id, userId: user.id })}`
      const otherCookie = yield* signIn(base, { workspace: other.slug, email: user.email, password: testPassword })

      expectStatus(204)(yield* admin.del(`/api/members/${user.id.toUpperCase()}`))
      expect(yield* stateOf(workspace, user.id)).toEqual({ roles: [], member: false, sessions: 0 })
      expect((yield* request(`${base}/api/auth/me`, { headers: { cookie } })).status).toBe(401)
      expect((yield* members(admin)).members.map((member) => member.userId)).not.toContain(user.id)
      expect((yield* request(`${base}/api/auth/me`, { headers: { cookie: otherCookie } })).status).toBe(200)
      expect(yield* stateOf(other, user.id)).toEqual({ roles: ["admin"], member: true, sessions: 1 })

      // Removed twice: there is no such member any more.
      expect((yield* admin.del(`/api/members/${user.id}`)).status).toBe(404)

      // Admitted again, with another role: the old session and the old role stay gone.
      yield* (yield* Roles).grant(workspace, "sales", "crm/deal", "update")
      const readmitted = yield* runCli(
        "member",
        "add",
        "--workspace",
        workspace.slug,
        "--email",
        user.email,
        "--role",
        "sales"
      )
      expect(readmitted.stderr).toEqual([])
      expect(yield* stateOf(workspace, user.id)).toEqual({ roles: ["sales"], member: true, sessions: 0 })
      expect((yield* request(`${base}/api/auth/me`, { headers: { cookie } })).status).toBe(401)
    })
  )
})

layer(TestApp, { excludeTestServices: true })("sign out everywhere", (it) => {
  it.effect("ends every session of the user, in every workspace, clears the cookie; an API key gets 403", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const other = yield* freshWorkspace
      const { user, cookie, client } = yield* signedInMember(base, workspace)
      const { cookie: someoneElse } = yield* signedInMember(base, workspace)
      const second = yield* signIn(base, { workspace: workspace.slug, email: user.email, password: testPassword })
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO ${sql(`${platformSchema}.memberships`)} ${sql.insert({ workspaceId: other.id, userId: user.id })}`
      const elsewhere = yield* signIn(base, { workspace: other.slug, email: user.email, password: testPassword })

      const { key } = yield* (yield* ApiKeys).create(workspace, "a key", "admin")
      const byKey = yield* bearerClient(base, key).post("/api/auth/logout-everywhere")
      expect(byKey.status).toBe(403)
      expect(byKey.body).toEqual(refusal("Forbidden"))

      const answer = yield* client.post("/api/auth/logout-everywhere")
      expect(answer.status).toBe(204)
      expect(answer.headers.get("set-cookie")).toMatch(/^session=;.*Max-Age=0/)
      for (const gone of [cookie, second, elsewhere]) {
        expect((yield* request(`${base}/api/auth/me`, { headers: { cookie: gone } })).status).toBe(401)
      }
      expect((yield* request(`${base}/api/auth/me`, { headers: { cookie: someoneElse } })).status).toBe(200)
    })
  )
})
