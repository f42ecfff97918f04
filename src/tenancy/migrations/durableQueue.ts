import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { SchemaMigration } from "../Migrations"

/**
 * The table `@effect/sql`'s persisted queue keeps every durable queue in. The
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
