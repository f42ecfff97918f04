import * as Migrator from "@effect/sql/Migrator"
import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"

/** A migration of one schema, given the schema's name to qualify its tables with. */
export type SchemaMigration = (schema: string) => Effect.Effect<void, SqlError, SqlClient.SqlClient>

const migrationsTable = "effect_sql_migrations"

/**
 * Brings one schema up to date with `@effect/sql`'s migrator, recording what
 * ran in the schema's own `effect_sql_migrations`. The schema and that table
 * are created first under an advisory lock, so concurrent starts (several
 * instances, parallel test files) neither race on CREATE nor run a migration
 * twice; the migrator itself then locks its table while it runs.
 */
export const migrateSchema = (schema: string, migrations: Record<string, SchemaMigration>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const table = `${schema}.${migrationsTable}`
    yield* sql.withTransaction(
      Effect.gen(function* () {
        yield* sql`SELECT pg_advisory_xact_lock(hashtext(${"migrate:" + schema}))`
        yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
        yield* sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
          migration_id integer PRIMARY KEY,
          created_at timestamptz NOT NULL DEFAULT now(),
          name text NOT NULL
        )`
      })
    )
    const loader = Migrator.fromRecord(
      Object.fromEntries(Object.entries(migrations).map(([key, migration]) => [key, migration(schema)]))
    )
    return yield* Migrator.make({})({ loader, table })
  }).pipe(Effect.withSpan("migrateSchema", { attributes: { schema } }))
