/**
 * The bench's data, made and removed through the service's own domain
 * services: workspaces `bench-b-<n>` (Workspaces.create: schema, migrations,
 * the built-in admin role), one admin user each (Users.create,
 * Memberships.add, Roles.assign), and a pool of `crm/company` records per
 * workspace (Records.create in a unit of work, with the user as actor).
 */
import { SqlClient } from "effect/sql"
import { Effect, Layer, ManagedRuntime, Option, Redacted, References } from "effect"
import { ServicesLive, StorageLive } from "../../src/app/AppLayer"
import { Memberships } from "../../src/auth/Memberships"
import { Roles } from "../../src/auth/Roles"
import { Users } from "../../src/auth/Users"
import { AppConfig, redisPrefixOf } from "../../src/config/AppConfig"
import { withActor } from "../../src/context/Frames"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { presenceKeys } from "../../src/presence/PresenceStoreRedis"
import { Records } from "../../src/records/Records"
import { RedisConnection } from "../../src/redis/RedisConnection"
import { platformSchema } from "../../src/tenancy/migrations/platform"
import type { Workspace } from "../../src/api/Workspace"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import type { BenchRedis } from "./protocol"
import { clusterNodes } from "./redisTarget"

export const slugPrefix = "bench-b-"
export const emailOf = (n: number) => `${slugPrefix}${n}@example.com`
export const password = "bench-broadcast-password"
export const businessObject = "crm/company"

/** The domain services over the real PostgreSQL and Redis (one server or a cluster), as the service builds them, quiet. */
export const servicesLayer = (databaseUrl: string, redis: BenchRedis, poolSize: number) =>
  Layer.mergeAll(
    ServicesLive,
    redis._tag === "Single" ? RedisConnection.layer(redis.url) : RedisConnection.layerCluster(clusterNodes(redis.nodes))
  ).pipe(
    Layer.provideMerge(PluginRegistry.layer),
    Layer.provideMerge(StorageLive),
    Layer.provideMerge(
      AppConfig.make({
        databaseUrl: Option.some(Redacted.make(databaseUrl)),
        redisUrl: redis._tag === "Single" ? Option.some(Redacted.make(redis.url)) : Option.none(),
        redisClusterNodes: redis._tag === "Cluster" ? Option.some(clusterNodes(redis.nodes)) : Option.none(),
        databasePoolSize: poolSize
      })
    ),
    Layer.provideMerge(Layer.succeed(References.MinimumLogLevel, "Warn"))
  )

/** `redis`: a single server's URL, or either kind. */
export const makeRuntime = (databaseUrl: string, redis: string | BenchRedis, poolSize = 10) =>
  ManagedRuntime.make(
    servicesLayer(databaseUrl, typeof redis === "string" ? { _tag: "Single", url: redis } : redis, poolSize)
  )

export interface BenchWorkspace {
  readonly workspace: Workspace
  readonly user: { readonly id: string; readonly name: string; readonly email: string }
  readonly recordIds: ReadonlyArray<string>
}

/** Workspace n (1-based) with its admin user and `records` records. */
const createOne = (n: number, records: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const workspaces = yield* Workspaces
    const users = yield* Users
    const memberships = yield* Memberships
    const roles = yield* Roles
    const units = yield* UnitOfWork
    const recordsService = yield* Records

    const workspace = yield* workspaces.create(`${slugPrefix}${n}`, `Bench broadcast ${n}`)
    const user = yield* users.create({ email: emailOf(n), name: `Bench User ${n}`, password })
    yield* sql.withTransaction(
      Effect.andThen(
        memberships.add(workspace.id, user.id),
        roles.assign(workspace, { kind: "user", id: user.id }, "admin")
      )
    )
    // Units of 100 records: a unit's hints are published one after another once it commits.
    const chunks = Array.from({ length: Math.ceil(records / 100) }, (_, c) =>
      Array.from({ length: Math.min(100, records - c * 100) }, (_, i) => c * 100 + i)
    )
    const created = yield* Effect.forEach(chunks, (chunk) =>
      units
        .run(
          workspace,
          Effect.forEach(chunk, (i) =>
            recordsService.create(businessObject, { name: `Company ${n}-${i}`, wonDeals: 0 })
          )
        )
        .pipe(withActor({ kind: "user", id: user.id, name: user.name, email: user.email }))
    )
    return {
      workspace,
      user: { id: user.id, name: user.name, email: user.email },
      recordIds: created.flat().map((r) => r.id)
    }
  })

/** `count` workspaces with `records` records each. */
export const createBenchData = (count: number, records: number) =>
  Effect.forEach(
    Array.from({ length: count }, (_, i) => i + 1),
    (n) => createOne(n, records),
    { concurrency: 4 }
  ).pipe(
    // The units' `changed` hints are published by detached fibers: let them go out before the caller closes Redis.
    Effect.tap(() => Effect.sleep("3 seconds")),
    Effect.mapError((error) => new Error(`bench setup: ${error._tag}: ${error.message}`))
  )

/**
 * Removes every bench workspace (Workspaces.drop: row and schema), the bench
 * users (no service deletes users: one DELETE, sessions and memberships
 * cascade) and the presence keys of the bench workspaces. Safe to run twice,
 * and before a run to clear what a killed run left.
 */
export const dropBenchData = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const workspaces = yield* Workspaces
  const { command } = yield* RedisConnection
  const prefix = redisPrefixOf(yield* AppConfig)
  const bench = (yield* workspaces.list).filter((w) => w.slug.startsWith(slugPrefix))
  const keys = bench.flatMap((w) => Object.values(presenceKeys(prefix, w.id, businessObject)))
  for (let i = 0; i < keys.length; i += 500) {
    const chunk = keys.slice(i, i + 500)
    yield* Effect.promise(() => command.del(...chunk))
  }
  yield* Effect.forEach(bench, workspaces.drop, { concurrency: 4, discard: true })
  const users = yield* sql`DELETE FROM ${sql(`${platformSchema}.users`)}
    WHERE email LIKE ${`${slugPrefix}%@example.com`} RETURNING id`.pipe(Effect.orDie)
  return { workspaces: bench.length, users: users.length, presenceKeys: keys.length }
})
