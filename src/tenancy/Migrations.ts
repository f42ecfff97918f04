import * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql"
import { Effect } from "effect"

/**
 * A migration of one schema, given the schema's name to qualify its tables
 * with. Whatever it fails with fails the migration, which is a defect.
 */
export type SchemaMigration = (schema: string) => Effect.Effect<void, unknown, SqlClient.SqlClient>

const migrationsTable = "effect_sql_migrations"

/**
 * Brings one schema up to date with Effect's SQL migrator, recording what
 * ran in the schema's own `effect_sql_migrations`, in one transaction. The
 * schema and that table are created first under an advisory lock held to the
 * end, so concurrent starts (several instances, parallel test files) neither
 * race on CREATE nor run a migration twice: the later one waits, then finds
 * nothing to do. Migrations are exempt from the connections' lock and
 * statement timeouts (docs/reliability.md): waiting for another instance's
 * migration, or rewriting a large table, is what they may rightly do. A
 * migration that fails (a lost connection, a wrong statement) is a defect:
 * nobody can act on it but the operator, and the instance does not start.
 */
export const migrateSchema = (schema: string, migrations: Record<string, SchemaMigration>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => inOneTransaction(sql, schema, migrations)).pipe(
    Effect.orDie,
    Effect.withSpan("migrateSchema", { attributes: { schema } })
  )

const inOneTransaction = (sql: SqlClient.SqlClient, schema: string, migrations: Record<string, SchemaMigration>) =>
  Effect.gen(function* () {
    const table = `${schema}.${migrationsTable}`
    yield* sql`SET LOCAL lock_timeout = 0`
    yield* sql`SET LOCAL statement_timeout = 0`
    yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`migrate:${schema}`}))`
    // Waiting for an advisory lock processes no catalog invalidations: a backend whose transaction
    // began before another one created the schema can still hold a cached "no such schema", and
    // its CREATE SCHEMA IF NOT EXISTS then fails on a duplicate key. Reading pg_namespace takes a
    // relation lock, which brings its catalog caches up to date first.
    yield* sql`SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = ${schema}`
    yield* sql`CREATE SCHEMA IF NOT EXISTS ${sql(schema)}`
    yield* sql`CREATE TABLE IF NOT EXISTS ${sql(table)} (
      migration_id integer PRIMARY KEY,
      created_at timestamptz NOT NULL DEFAULT now(),
      name text NOT NULL
    )`
    const loader = Migrator.fromRecord(
      Object.fromEntries(Object.entries(migrations).map(([key, migration]) => [key, migration(schema)]))
    )
    return yield* Migrator.make({})({ loader, table })
  }).pipe(sql.withTransaction)
