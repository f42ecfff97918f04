import * as PersistedQueue from "@effect/experimental/PersistedQueue"
import * as SqlPersistedQueue from "@effect/sql/SqlPersistedQueue"
import { Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig"
import { migrateSchema } from "../tenancy/Migrations"
import { queueTable } from "../tenancy/migrations/durableQueue"
import { platformMigrations, platformSchema } from "../tenancy/migrations/platform"

/**
 * Durable queues in PostgreSQL: `@effect/sql`'s persisted queue (one table,
 * `FOR UPDATE SKIP LOCKED` polling, lock expiry so a dead worker's element is
 * taken again, per-element attempts and last failure). Offering inside a unit
 * of work runs on the unit's transaction, so a rolled-back unit enqueues nothing.
 */
export const DurableQueuesLive = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    // The platform migration creates the table under a lock before the library's own DDL runs.
    yield* migrateSchema(platformSchema, platformMigrations)
    return PersistedQueue.layer.pipe(
      Layer.provide(SqlPersistedQueue.layerStore({ tableName: queueTable, pollInterval: config.queuePollInterval }))
    )
  })
)

/** The queue of one kind of work for this deployment (see `QUEUE_PREFIX`). */
export const queueName = (prefix: string, kind: "jobs" | "workflows") => `${prefix}:${kind}`
