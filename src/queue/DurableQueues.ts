import * as PersistedQueue from "effect/persistence/PersistedQueue"
import { Duration, Effect, Layer, Schedule } from "effect"
import { AppConfig } from "../config/AppConfig"
import { migrateSchema } from "../tenancy/Migrations"
import { queueTable } from "../tenancy/migrations/durableQueue"
import { platformMigrations, platformSchema } from "../tenancy/migrations/platform"

/**
 * Durable queues in PostgreSQL: Effect's SQL persisted queue (one table,
 * `FOR UPDATE SKIP LOCKED` polling, lock expiry so a dead worker's element is
 * taken again, per-element attempts and last failure). Offering inside a unit
 * of work runs on the unit's transaction, so a rolled-back unit enqueues nothing.
 */
export const DurableQueuesLive = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    // The platform migration creates the table under a lock before the library's own DDL runs.
    yield* migrateSchema(platformSchema, platformMigrations)
    return PersistedQueue.layer.pipe(
      Layer.provide(PersistedQueue.layerStoreSql({ tableName: queueTable, pollInterval: config.queuePollInterval }))
    )
  })
)

/**
 * The queue's own delay before it hands a failed element out again: none, as
 * in Effect 3. The worker waits before each retry itself (see `retryDelay`),
 * to the millisecond (the SQL store counts whole seconds).
 */
export const immediateRetry = Schedule.spaced(Duration.zero)

/** The queue of one kind of work for this deployment (see `QUEUE_PREFIX`). */
export const queueName = (prefix: string, kind: "jobs" | "workflows" | "ledger-digests") => `${prefix}:${kind}`
