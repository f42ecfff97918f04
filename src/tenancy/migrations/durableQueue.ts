import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import type { SchemaMigration } from "../Migrations"

/**
 * The table Effect's persisted queue keeps every durable queue in. The
 * library names its indexes after the table, so the name cannot carry a
 * schema: it lives in the database's default schema.
 */
export const queueTable = "durable_queue"

/**
 * The library's own DDL, run once by a platform migration (which holds an
 * advisory lock), so that several instances starting together on a fresh
 * database do not race on the library's `CREATE TABLE IF NOT EXISTS`.
 */
export const createQueueTable: ReturnType<SchemaMigration> = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const table = sql(queueTable)
  yield* sql`CREATE TABLE IF NOT EXISTS ${table} (
    sequence SERIAL PRIMARY KEY,
    id VARCHAR(36) NOT NULL,
    queue_name VARCHAR(100) NOT NULL,
    element TEXT NOT NULL,
    completed BOOLEAN NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_failure TEXT NULL,
    acquired_at TIMESTAMP NULL,
    acquired_by UUID NULL,
    created_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL
  )`
  yield* sql`CREATE UNIQUE INDEX IF NOT EXISTS ${sql(`idx_${queueTable}_id`)} ON ${table} (id)`
  yield* sql`CREATE INDEX IF NOT EXISTS ${sql(`idx_${queueTable}_take`)} ON ${table} (queue_name, completed, attempts, acquired_at)`
  yield* sql`CREATE INDEX IF NOT EXISTS ${sql(`idx_${queueTable}_update`)} ON ${table} (sequence, acquired_by)`
})

/**
 * Effect 4's store upgrades the table itself (its own migrations, recorded in
 * `durable_queue_migrations`: a `state` and a `visible_at` column replace
 * `completed`), but offers with `ON CONFLICT (id, queue_name)`, which needs a
 * unique index on both columns; the one made above is on `id` alone, and the
 * library's `CREATE UNIQUE INDEX IF NOT EXISTS` of the same name keeps it.
 */
export const queueIdIndexOnQueueName: ReturnType<SchemaMigration> = Effect.gen(function* () {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const index = sql(`idx_${queueTable}_id`)
  yield* sql`DROP INDEX IF EXISTS ${index}`
  yield* sql`CREATE UNIQUE INDEX ${index} ON ${sql(queueTable)} (id, queue_name)`
})
