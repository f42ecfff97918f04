import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Option } from "effect"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Memberships } from "../../src/auth/Memberships"
import { Users } from "../../src/auth/Users"
import { platformSchema } from "../../src/tenancy/migrations/platform"
import { schemaNameOf } from "../../src/api/WorkspaceSlug"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { runCli } from "../support/cli"
import { baseUrl, freshUser, freshWorkspace, TestApp, testPassword, uniqueSuffix } from "../support/TestApp"
import { request, signIn } from "../support/http"

const hostileSlugs = [
  `x"; DROP SCHEMA platform CASCADE; --`,
  `a'; drop table x; --`,
  `a'); DELETE FROM platform.users; --`
]

const badSignIn = { _tag: "Unauthorized", message: "wrong workspace, email or password", requestId: expect.any(String) }
const badKey = {
  _tag: "Unauthorized",
  message: "the API key is invalid or has been revoked",
  requestId: expect.any(String)
}

const failureTag = <A, E>(exit: Exit.Exit<A, E>) =>
  Exit.isSuccess(exit)
    ? "success"
    : Option.match(Cause.findErrorOption(exit.cause), {
        onNone: () => `defect: ${Cause.pretty(exit.cause).split("\n")[0]}`,
        onSome: (error) =>
          typeof error === "object" && error !== null && "_tag" in error ? String(error._tag) : String(error)
      })

const platformTables = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ tableName: string }>`SELECT table_name FROM information_schema.tables
    WHERE table_schema = ${platformSchema} ORDER BY table_name`.pipe(
    Effect.map((rows) => rows.map((row) => row.tableName)),
    Effect.orDie
  )
)

const expectedPlatformTables = ["effect_sql_migrations", "memberships", "sessions", "users", "workspaces"]

layer(TestApp, { excludeTestServices: true })("SQL injection", (it) => {
  it.effect("slugs carrying SQL are refused with BadRequest by the service and by the CLI; nothing is created", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const workspaces = yield* Workspaces
      for (const slug of hostileSlugs) {
        const error = yield* Effect.flip(workspaces.create(slug, "hostile"))
        expect(error._tag, slug).toBe("BadRequest")
        expect(error.message).toMatch(/^invalid workspace slug: /)

        const cli = yield* runCli("workspace", "create", slug)
        expect(failureTag(cli.exit), slug).toBe("BadRequest")
        expect(cli.stdout).toEqual([])

        expect(yield* workspaces.findBySlug(slug)).toEqual(Option.none())
        const schemas = yield* sql`SELECT 1 FROM information_schema.schemata WHERE schema_name = ${schemaNameOf(slug)}`
        expect(schemas).toEqual([])
      }
      expect(yield* platformTables).toEqual(expectedPlatformTables)
    })
  )

  it.effect("an email and a name with quotes are stored byte for byte, and their user signs in over HTTP", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const users = yield* Users
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const email = `o'hara+"x"-${uniqueSuffix()}@example.com`
      const name = `Robert'); DROP TABLE platform.users; -- "Bobby"`
      const user = yield* Effect.acquireRelease(users.create({ email, name, password: testPassword }), (created) =>
        sql`DELETE FROM ${sql(`${platformSchema}.users`)} WHERE id = ${created.id}`.pipe(Effect.orDie)
      )
      expect(user.email).toBe(email)
      const stored = yield* sql<{
        email: string
        name: string
      }>`SELECT email, name FROM ${sql(`${platformSchema}.users`)}
        WHERE id = ${user.id}`
      expect(stored).toEqual([{ email, name }])
      expect(Buffer.from(stored[0]?.email ?? "").equals(Buffer.from(email))).toBe(true)
      expect(Option.map(yield* users.findByEmail(email), (found) => found.id)).toEqual(Option.some(user.id))

      yield* (yield* Memberships).add(workspace.id, user.id)
      const cookie = yield* signIn(base, { workspace: workspace.slug, email, password: testPassword })
      const me = yield* request(`${base}/api/auth/me`, { headers: { cookie } })
      expect(me.status).toBe(200)
      expect(me.body).toEqual(expect.objectContaining({ id: user.id, email, name }))
      expect(yield* platformTables).toEqual(expectedPlatformTables)
    })
  )

  it.effect("sign-in with SQL in the workspace or the email is 401, even with the right password", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace, role: "admin" })
      const login = (credentials: { workspace: string; email: string }) =>
        request(`${base}/api/auth/login`, { method: "POST", json: { ...credentials, password: testPassword } })

      // The control: these very credentials work.
      expect((yield* login({ workspace: workspace.slug, email: user.email })).status).toBe(200)
      const attempts = [
        { workspace: `demo' OR '1'='1`, email: user.email },
        { workspace: `${workspace.slug}' OR '1'='1`, email: user.email },
        { workspace: `${workspace.slug}'; --`, email: user.email },
        { workspace: workspace.slug, email: `' OR '1'='1` },
        { workspace: workspace.slug, email: `${user.email}' --` }
      ]
      for (const attempt of attempts) {
        const response = yield* login(attempt)
        expect(response.status, JSON.stringify(attempt)).toBe(401)
        expect(response.body).toEqual(badSignIn)
        expect(response.headers.get("set-cookie")).toBeNull()
      }
      expect(yield* platformTables).toEqual(expectedPlatformTables)
    })
  )

  it.effect("bearer keys with SQL in them are 401", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { apiKey, key } = yield* (yield* ApiKeys).create(workspace, "importer", "admin")
      const secret = key.split(".")[2] ?? ""
      const me = (bearer: string) => request(`${base}/api/auth/me`, { headers: { authorization: `Bearer ${bearer}` } })

      // The control: the key itself works.
      expect((yield* me(key)).status).toBe(200)
      const hostile = [
        `ak_x'--.${apiKey.id}.${secret}`,
        `ak_${workspace.slug}' OR '1'='1.${apiKey.id}.${secret}`,
        `ak_${workspace.slug}.${apiKey.id}' OR '1'='1.${secret}`,
        `ak_${workspace.slug}.${apiKey.id}.${secret}' OR '1'='1`,
        // The shape the key pattern accepts, with SQL's comment marker in the slug.
        `ak_${workspace.slug}--drop-schema-platform.${apiKey.id}.${secret}`,
        `ak_x--.${apiKey.id}.${secret}`
      ]
      for (const bearer of hostile) {
        const response = yield* me(bearer)
        expect(response.status, bearer).toBe(401)
        expect(response.body).toEqual(badKey)
      }
      expect(yield* platformTables).toEqual(expectedPlatformTables)
    })
  )

  it.effect("a bearer key whose id has the key's shape but is no uuid is 401, not 500", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const secret = "a".repeat(43)
      for (const id of ["-".repeat(36), "f".repeat(36)]) {
        const response = yield* request(`${base}/api/auth/me`, {
          headers: { authorization: `Bearer ak_${workspace.slug}.${id}.${secret}` }
        })
        expect(response.status, id).toBe(401)
        expect(response.body).toEqual(badKey)
      }
    })
  )
})
