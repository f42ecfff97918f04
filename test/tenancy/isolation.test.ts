import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, Deferred, Effect, Exit, Fiber, Option, Schedule } from "effect"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Roles } from "../../src/auth/Roles"
import { migrateSchema } from "../../src/tenancy/Migrations"
import { platformSchema } from "../../src/tenancy/migrations/platform"
import { workspaceMigrations } from "../../src/tenancy/migrations/workspace"
import type { Workspace } from "../../src/api/Workspace"
import { schemaNameOf } from "../../src/api/WorkspaceSlug"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { baseUrl, freshUser, freshWorkspace, TestApp, testPassword, uniqueSuffix } from "../support/TestApp"
import { holdInTransaction } from "../support/holdInTransaction"
import { bearerClient, clientFor } from "../support/api"
import { login } from "../support/login"
import { settled } from "../support/apiCaller"
import { signIn } from "../support/http"

const perWorkspace = 20

/** Polls a condition until it holds (the tests wait on database state, never on a fixed delay). */
const waitUntil = <R>(condition: Effect.Effect<boolean, never, R>) =>
  Effect.repeat(condition, { until: (holds) => holds, schedule: Schedule.spaced("10 millis") }).pipe(
    Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.fail(new Error("condition never held")) }),
    Effect.orDie
  )

const count = (table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(table)}`.pipe(
      Effect.map((rows) => rows[0]?.n),
      Effect.orDie
    )
  )

const schemaExists = (schema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM information_schema.schemata WHERE schema_name = ${schema}`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )
  )

/** Someone waits for the advisory lock `migrateSchema` takes on `schema`. */
const someoneWaitsForMigrationLock = (schema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`SELECT 1 FROM pg_locks
        WHERE locktype = 'advisory' AND NOT granted
          AND objid = (hashtext(${`migrate:${schema}`})::bigint & 4294967295)::oid`.pipe(
      Effect.map((rows) => rows.length > 0),
      Effect.orDie
    )
  )

/** A statement waits for a row lock on a workspace row (migrateAll holding a workspace while it migrates). */
const someoneWaitsForWorkspaceRow = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql`SELECT 1 FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND query LIKE '%FOR KEY SHARE%' AND pid <> pg_backend_pid()`.pipe(
    Effect.map((rows) => rows.length > 0),
    Effect.orDie
  )
)

/**
 * Holds `migrateSchema`'s advisory lock on `schema` in a transaction of its
 * own until the returned effect is run (or the scope closes).
 */
const holdMigrationLock = (schema: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    holdInTransaction(sql`SELECT pg_advisory_xact_lock(hashtext(${`migrate:${schema}`}))`)
  )

/** Drops whatever a test created under `slug`, row and schema, when the scope closes. */
const cleanUpSlug = (slug: string) =>
  Effect.gen(function* () {
    const workspaces = yield* Workspaces
    const sql = yield* SqlClient.SqlClient
    yield* Effect.addFinalizer(() =>
      Effect.gen(function* () {
        const found = yield* workspaces.findBySlug(slug)
        if (Option.isSome(found)) yield* workspaces.drop(found.value)
        yield* sql`DROP SCHEMA IF EXISTS ${sql(schemaNameOf(slug))} CASCADE`.pipe(Effect.orDie)
      })
    )
  })

/** Writes `perWorkspace` roles, each with a grant and an API key holding it. */
const populate = (workspace: Workspace, businessObject: string) =>
  Effect.gen(function* () {
    const roles = yield* Roles
    const apiKeys = yield* ApiKeys
    return yield* Effect.forEach(
      Array.from({ length: perWorkspace }, (_, i) => i),
      (i) =>
        Effect.gen(function* () {
          yield* roles.grant(workspace, `role-${i}`, businessObject, i % 2 === 0 ? "update" : "read")
          return yield* apiKeys.create(workspace, `key-${i}`, `role-${i}`)
        }),
      { concurrency: "unbounded" }
    )
  })

layer(TestApp, { excludeTestServices: true })("tenant isolation", (it) => {
  it.effect("two workspaces written concurrently each hold exactly their own rows", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const roles = yield* Roles
      const a = yield* freshWorkspace
      const b = yield* freshWorkspace
      const [keysOfA, keysOfB] = yield* Effect.all([populate(a, "crm/deal"), populate(b, "crm/company")], {
        concurrency: "unbounded"
      })
      const idsOfA = keysOfA.map(({ apiKey }) => apiKey.id).sort()
      const idsOfB = keysOfB.map(({ apiKey }) => apiKey.id).sort()

      for (const [workspace, ids, businessObject] of [
        [a, idsOfA, "crm/deal"],
        [b, idsOfB, "crm/company"]
      ] as const) {
        expect(yield* count(workspace.table("api_keys"))).toBe(perWorkspace)
        expect(yield* count(workspace.table("roles"))).toBe(perWorkspace + 1) // + admin
        expect(yield* count(workspace.table("role_grants"))).toBe(perWorkspace + 2) // + admin's two
        expect(yield* count(workspace.table("role_assignments"))).toBe(perWorkspace)

        const keyRows = yield* sql<{ id: string }>`SELECT id FROM ${sql(workspace.table("api_keys"))} ORDER BY id`
        expect(keyRows.map((row) => row.id)).toEqual(ids)
        const assigned = yield* sql<{ principalId: string }>`SELECT principal_id FROM ${sql(
          workspace.table("role_assignments")
        )} ORDER BY principal_id`
        expect(assigned.map((row) => row.principalId)).toEqual(ids)
        const objects = yield* sql<{ businessObject: string }>`SELECT DISTINCT business_object FROM ${sql(
          workspace.table("role_grants")
        )} ORDER BY business_object`
        expect(objects.map((row) => row.businessObject)).toEqual(["*", businessObject])
      }

      // Each key's service account holds its grant in its own workspace and nothing in the other.
      const [first] = keysOfA
      if (first === undefined) throw new Error("no key created")
      const principal = { kind: "service-account", id: first.apiKey.id } as const
      expect((yield* roles.grantsOf(a, principal)).length).toBe(1)
      expect(yield* roles.grantsOf(b, principal)).toEqual([])
    })
  )

  it.effect("an API key authenticates in its own workspace only: with another workspace's slug it is 401", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const a = yield* freshWorkspace
      const b = yield* freshWorkspace
      const [keysOfA, keysOfB] = yield* Effect.all([populate(a, "crm/deal"), populate(b, "crm/deal")], {
        concurrency: "unbounded"
      })
      const me = (key: string) => settled(bearerClient(base, key).call((api) => api.auth.me()))

      yield* Effect.forEach(
        [...keysOfA.map((created) => [a, created] as const), ...keysOfB.map((created) => [b, created] as const)],
        ([workspace, { apiKey, key }]) =>
          Effect.map(me(key), (response) => {
            expect(response.status).toBe(200)
            expect(response.body).toEqual(
              expect.objectContaining({
                id: apiKey.id,
                workspace: { id: workspace.id, slug: workspace.slug, name: workspace.name }
              })
            )
          }),
        { concurrency: 8, discard: true }
      )

      yield* Effect.forEach(
        keysOfA,
        ({ key }) => {
          const rewritten = key.replace(`ak_${a.slug}.`, `ak_${b.slug}.`)
          expect(rewritten).not.toBe(key)
          return Effect.map(me(rewritten), (response) => {
            expect(response.status).toBe(401)
            expect(response.body).toEqual({
              _tag: "Unauthorized",
              message: "the API key is invalid or has been revoked",
              requestId: expect.any(String)
            })
          })
        },
        { concurrency: 8, discard: true }
      )
    })
  )

  it.effect("a member of one workspace cannot sign in to another", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const a = yield* freshWorkspace
      const b = yield* freshWorkspace
      const user = yield* freshUser({ workspace: a, role: "admin" })
      const cookie = yield* signIn(base, { workspace: a.slug, email: user.email, password: testPassword })
      const me = yield* clientFor(base, cookie).call((api) => api.auth.me())
      expect(me.body).toEqual(expect.objectContaining({ workspace: { id: a.id, slug: a.slug, name: a.name } }))

      const intoB = yield* login(base, { workspace: b.slug, email: user.email, password: testPassword })
      expect(intoB.status).toBe(401)
      expect(intoB.body).toEqual({
        _tag: "Unauthorized",
        message: "wrong workspace, email or password",
        requestId: expect.any(String)
      })
      expect(intoB.headers.get("set-cookie")).toBeNull()
    })
  )

  it.effect("migrateAll run twice at once succeeds, and a migrated schema is not migrated again", () =>
    Effect.gen(function* () {
      const workspaces = yield* Workspaces
      const workspace = yield* freshWorkspace
      const [first, second] = yield* Effect.all([workspaces.migrateAll, workspaces.migrateAll], {
        concurrency: "unbounded"
      })
      expect(first).toBeGreaterThanOrEqual(1)
      expect(second).toBeGreaterThanOrEqual(1)
      expect(yield* count(workspace.table("effect_sql_migrations"))).toBe(Object.keys(workspaceMigrations).length)
      expect(yield* migrateSchema(workspace.schema, workspaceMigrations)).toEqual([])
      expect(yield* count(workspace.table("roles"))).toBe(1)
    })
  )

  it.effect("migrateSchema run twice at once on a new schema migrates it exactly once", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const schema = `t_migrate_${uniqueSuffix()}`
      yield* Effect.addFinalizer(() => sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`.pipe(Effect.orDie))
      const runs = yield* Effect.all(
        [migrateSchema(schema, workspaceMigrations), migrateSchema(schema, workspaceMigrations)],
        { concurrency: "unbounded" }
      )
      // Every migration, as the migrator names them ("0001_access" runs as [1, "access"]).
      const all = Object.keys(workspaceMigrations)
        .sort()
        .map((key) => key.replace(/^0*(\d+)_/, "$1_"))
      expect(all[0]).toBe("1_access")
      const ran = runs.map((run) => run.map(([id, name]) => `${id}_${name}`))
      expect(ran.sort()).toEqual([[], all])
      expect(yield* migrateSchema(schema, workspaceMigrations)).toEqual([])
      expect(yield* count(`${schema}.effect_sql_migrations`)).toBe(all.length)
      expect(yield* count(`${schema}.role_grants`)).toBe(2)
    })
  )

  it.effect("creating an existing slug fails with Conflict and leaves one row, unchanged", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const workspaces = yield* Workspaces
      const workspace = yield* freshWorkspace
      const error = yield* Effect.flip(workspaces.create(workspace.slug, "Another name"))
      expect(error).toEqual(
        expect.objectContaining({ _tag: "Conflict", message: `workspace ${workspace.slug} already exists` })
      )
      const rows =
        yield* sql`SELECT id, name FROM ${sql(`${platformSchema}.workspaces`)} WHERE slug = ${workspace.slug}`
      expect(rows).toEqual([{ id: workspace.id, name: workspace.name }])
    })
  )

  it.effect("two creates of one slug at once: one succeeds, the other fails with Conflict", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const workspaces = yield* Workspaces
      const slug = `t-${uniqueSuffix()}`
      yield* cleanUpSlug(slug)
      const schema = schemaNameOf(slug)
      // The first create inserts its row, then waits for the migration lock, uncommitted.
      const release = yield* holdMigrationLock(schema)
      const first = yield* Effect.forkChild(Effect.exit(workspaces.create(slug)))
      yield* waitUntil(someoneWaitsForMigrationLock(schema))
      // The second finds no committed row, and its INSERT waits for the first transaction.
      const second = yield* Effect.forkChild(Effect.exit(workspaces.create(slug)))
      yield* waitUntil(
        sql`SELECT 1 FROM pg_stat_activity
            WHERE wait_event_type = 'Lock' AND wait_event = 'transactionid'
              AND query LIKE ${`INSERT INTO "${platformSchema}"."workspaces"%`}`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )
      )
      yield* release
      const exits = [yield* Fiber.join(first), yield* Fiber.join(second)]
      const outcomes = exits.map((exit) =>
        Exit.isSuccess(exit)
          ? "created"
          : Option.match(Cause.findErrorOption(exit.cause), {
              onNone: () => Cause.pretty(exit.cause).split("\n")[0],
              onSome: (e) => e._tag
            })
      )
      expect(outcomes).toEqual(["created", "Conflict"])
      const rows = yield* sql`SELECT 1 FROM ${sql(`${platformSchema}.workspaces`)} WHERE slug = ${slug}`
      expect(rows.length).toBe(1)
    })
  )

  it.effect("a workspace dropped while migrateAll runs stays dropped", () =>
    Effect.gen(function* () {
      const workspaces = yield* Workspaces
      const sql = yield* SqlClient.SqlClient
      const slug = `t-${uniqueSuffix()}`
      yield* cleanUpSlug(slug)
      const workspace = yield* workspaces.create(slug)
      // A drop in progress: the row deleted and the schema dropped, not yet committed.
      const dropped = yield* Deferred.make<void>()
      const commit = yield* Deferred.make<void>()
      const dropping = yield* sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`DELETE FROM ${sql(`${platformSchema}.workspaces`)} WHERE id = ${workspace.id}`
            yield* sql`DROP SCHEMA ${sql(workspace.schema)} CASCADE`
            yield* Deferred.succeed(dropped, undefined)
            yield* Deferred.await(commit)
          })
        )
        .pipe(Effect.orDie, Effect.forkScoped)
      yield* Deferred.await(dropped)
      // migrateAll still lists the workspace (the delete is not committed) and waits on its row.
      const migrating = yield* Effect.forkChild(workspaces.migrateAll)
      yield* waitUntil(someoneWaitsForWorkspaceRow)
      yield* Deferred.succeed(commit, undefined)
      yield* Fiber.join(dropping)
      yield* Fiber.join(migrating)
      expect(yield* workspaces.findBySlug(slug)).toEqual(Option.none())
      expect(yield* schemaExists(workspace.schema)).toBe(false)
    })
  )
})
