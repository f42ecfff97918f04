import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { Console, Effect } from "effect"
import { Memberships } from "../auth/Memberships"
import { Roles } from "../auth/Roles"
import { Users } from "../auth/Users"
import { DatabaseInfo } from "../db/Database"
import { orDieOnSqlError } from "../db/orDieOnSqlError"
import { Seeders } from "../seeding/Seeders"
import { Workspaces } from "../tenancy/Workspaces"

export const demo = {
  workspace: "demo",
  email: "demo@example.com",
  name: "Demo User",
  password: "demo-password"
} as const

/**
 * A new workspace: its schema, migrated, and every plugin's seed data, in one
 * transaction (the seeders' units join it), so a failure leaves nothing behind.
 */
export const provisionWorkspace = (slug: string, name?: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const workspaces = yield* Workspaces
    const seeders = yield* Seeders
    return yield* sql
      .withTransaction(
        Effect.gen(function* () {
          const workspace = yield* workspaces.create(slug, name)
          const seeded = yield* seeders.seedWorkspace(workspace)
          return { workspace, seeded }
        })
      )
      .pipe(orDieOnSqlError)
  })

/**
 * Brings every schema up to date, and on an embedded database with no
 * workspace yet (a fresh data directory) creates a demo workspace with one
 * admin user and the plugins' seed data, in one transaction, so that a
 * newcomer can sign in and find records at once.
 * Tells whether it provisioned the demo.
 */
export const startUp = Effect.gen(function* () {
  const workspaces = yield* Workspaces
  const database = yield* DatabaseInfo
  const count = yield* workspaces.migrateAll
  yield* Effect.logInfo("schemas migrated").pipe(Effect.annotateLogs({ workspaces: count }))
  if (database.kind !== "embedded" || count > 0) return false
  const sql = yield* SqlClient.SqlClient
  const users = yield* Users
  const memberships = yield* Memberships
  const roles = yield* Roles
  yield* sql
    .withTransaction(
      Effect.gen(function* () {
        const { workspace } = yield* provisionWorkspace(demo.workspace, "Demo")
        const user = yield* users.create(demo)
        yield* memberships.add(workspace.id, user.id)
        yield* roles.assign(workspace, { kind: "user", id: user.id }, "admin")
      })
    )
    .pipe(Effect.orDie)
  return true
})

/** How to sign in to the demo, and how to set up one's own workspace; printed once the server listens. */
export const printDemoHint = HttpServer.addressFormattedWith((address) =>
  Console.log(
    [
      "",
      `Demo workspace provisioned. Open ${address}/ in a browser and sign in, or with curl:`,
      `  curl -c cookies.txt -H 'content-type: application/json' \\`,
      `    -d '{"workspace":"${demo.workspace}","email":"${demo.email}","password":"${demo.password}"}' \\`,
      `    ${address}/api/auth/login`,
      `  (workspace "${demo.workspace}", email ${demo.email}, password ${demo.password})`,
      "",
      "The admin command line works on this embedded database while the server runs (the server runs its",
      "commands): npm run admin -- workspace list",
      "",
      "Your own workspace, on your own PostgreSQL (the admin command line works on the same DATABASE_URL):",
      "  export DATABASE_URL=postgres://user:pass@host:5432/db",
      "  npm run admin -- workspace create acme",
      "  npm run admin -- user create --email you@example.com --name You   # asks for the password",
      "  npm run admin -- member add --workspace acme --email you@example.com --role admin",
      "  npm start",
      "  (npm run admin -- --help lists every command: list, roles, API keys, agents, ...)",
      ""
    ].join("\n")
  )
)
