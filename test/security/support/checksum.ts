import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { queueTable } from "../../../src/tenancy/migrations/durableQueue"

/** Each table of a schema with the md5 of its rows (as text, sorted) and their count. */
export type SchemaChecksum = ReadonlyMap<string, string>

/**
 * Every table of the workspace's schema, excluding none (records, audit
 * rows, roles, keys, seeds, completed runs, whatever a later migration
 * adds): one md5 over each table's rows, ordered, and its row count.
 */
export const schemaChecksum = (schema: string) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const tables = yield* sql<{ tableName: string }>`SELECT table_name FROM information_schema.tables
      WHERE table_schema = ${schema} AND table_type = 'BASE TABLE' ORDER BY table_name`
    if (tables.length === 0) return new Map<string, string>()
    const parts = tables.map(
      ({ tableName }) =>
        sql`SELECT ${tableName}::text AS table_name,
          md5(coalesce(string_agg(t::text, E'\n' ORDER BY t::text), '')) || ':' || count(*) AS digest
          FROM ${sql(`${schema}.${tableName}`)} t`
    )
    const rows = yield* sql<{ tableName: string; digest: string }>`${sql.join(" UNION ALL ", false)(parts)}`
    return new Map(rows.map((row) => [row.tableName, row.digest]))
  }).pipe(Effect.orDie)

/** The tables whose digest differs, for a failure message. */
export const changedTables = (before: SchemaChecksum, after: SchemaChecksum): ReadonlyArray<string> =>
  [...new Set([...before.keys(), ...after.keys()])].filter((table) => before.get(table) !== after.get(table))

/**
 * Background work this app queued (jobs, workflow runs) that has not
 * finished: a 2xx that queued some writes again a moment later, so the
 * suite waits for it before it takes its next "before" checksum.
 */
export const pendingWork = (queuePrefix: string, maxAttempts: number) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ pending: string }>`SELECT count(*)::text AS pending FROM ${sql(queueTable)}
      WHERE queue_name LIKE ${`${queuePrefix}:%`} AND state = 'pending' AND attempts < ${maxAttempts}`
    return Number(rows[0]?.pending ?? "0")
  }).pipe(Effect.orDie)
