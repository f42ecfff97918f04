import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import { Duration, Effect, Layer, Option, Redacted, References } from "effect"
import { randomBytes } from "node:crypto"
import { appLayer, ServicesLive, StorageLive } from "../../src/app/AppLayer"
import { Memberships } from "../../src/auth/Memberships"
import { Roles } from "../../src/auth/Roles"
import { Users } from "../../src/auth/Users"
import type { AppConfigShape } from "../../src/config/AppConfig"
import { AppConfig } from "../../src/config/AppConfig"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { platformSchema } from "../../src/tenancy/migrations/platform"
import { Workspaces } from "../../src/tenancy/Workspaces"

/** The machine's PostgreSQL and Redis (see README, "Tests"). */
export const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test"
export const testRedisUrl = process.env.TEST_REDIS_URL ?? "redis://127.0.0.1:6379"

export const uniqueSuffix = () => randomBytes(5).toString("hex")

/** The workflow engine's credential in tests. */
export const testEngineToken = "test-engine-token-0123456789abcdef0123456789"

/**
 * Each test app gets its own durable queues (a fresh `QUEUE_PREFIX`), so test
 * files running side by side never take each other's jobs; workers poll
 * often and retry soon, so tests wait little.
 */
export const testConfig = (overrides: Partial<AppConfigShape> = {}) =>
  AppConfig.make({
    databaseUrl: Option.some(Redacted.make(testDatabaseUrl)),
    redisUrl: Option.some(Redacted.make(testRedisUrl)),
    databasePoolSize: 5,
    host: "127.0.0.1",
    port: 0,
    engineToken: Option.some(Redacted.make(testEngineToken)),
    queuePrefix: `test-${uniqueSuffix()}`,
    queuePollInterval: Duration.millis(50),
    jobRetryBase: Duration.millis(50),
    jobMaxAttempts: 3,
    ...overrides
  })

const quiet = Layer.succeed(References.MinimumLogLevel, "Warn")

/**
 * The domain services over the real PostgreSQL and Redis, schemas migrated; no HTTP and no background workers.
 * Fresh (as every `testApp`): v4 shares built layers between nested `provide`s by identity, so without it a test
 * app provided inside a `layer(...)` block would reuse that block's pools and bus, built for another configuration.
 */
export const testServices = (
  overrides: Partial<AppConfigShape> = {},
  plugins: Layer.Layer<PluginRegistry> = PluginRegistry.layer
) =>
  Layer.effectDiscard(Workspaces.use((w) => w.migrateAll)).pipe(
    Layer.provideMerge(ServicesLive),
    Layer.provideMerge(plugins),
    Layer.provideMerge(StorageLive),
    Layer.provideMerge(testConfig(overrides)),
    Layer.provide(quiet),
    Layer.fresh
  )

export const TestServices = testServices()

/** The whole service on a free port, over the real PostgreSQL and Redis. */
export const testApp = (
  overrides: Partial<AppConfigShape> = {},
  plugins?: Layer.Layer<PluginRegistry>,
  pubsub?: Parameters<typeof appLayer>[2]
) => appLayer(testConfig(overrides), plugins, pubsub).pipe(Layer.provide(quiet), Layer.fresh)

export const TestApp = testApp()

/** `http://127.0.0.1:<port>` of the server in context. */
export const baseUrl = HttpServer.HttpServer.use(({ address }) =>
  address._tag === "UnixPathAddress"
    ? Effect.die("not a TCP server")
    : Effect.succeed(`http://127.0.0.1:${address.port}`)
)

/** A new workspace, dropped with its schema when the scope closes. */
export const freshWorkspace = Effect.gen(function* () {
  const workspaces = yield* Workspaces
  return yield* Effect.acquireRelease(workspaces.create(`t-${uniqueSuffix()}`), (w) => workspaces.drop(w))
})

export const testPassword = "correct horse battery"

/** A new user, a member of `workspace` holding `role` when given; deleted when the scope closes. */
export const freshUser = (options: { workspace?: import("../../src/api/Workspace").Workspace; role?: string } = {}) =>
  Effect.gen(function* () {
    const users = yield* Users
    const sql = yield* SqlClient.SqlClient
    const suffix = uniqueSuffix()
    const user = yield* Effect.acquireRelease(
      users.create({ email: `user-${suffix}@example.com`, name: `User ${suffix}`, password: testPassword }),
      (u) => sql`DELETE FROM ${sql(`${platformSchema}.users`)} WHERE id = ${u.id}`.pipe(Effect.orDie)
    )
    if (options.workspace) {
      yield* (yield* Memberships).add(options.workspace.id, user.id)
      if (options.role) yield* (yield* Roles).assign(options.workspace, { kind: "user", id: user.id }, options.role)
    }
    return user
  })
