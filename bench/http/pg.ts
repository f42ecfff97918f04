/**
 * node-postgres for the floors (the raw driver: `@effect/sql-pg` 4 has its
 * own), typed by hand for the few calls the floors make.
 */
import { createHash } from "node:crypto"
import { createRequire } from "node:module"

export interface PgQueryResult<Row> {
  readonly rows: Array<Row>
}

/** A statement node-postgres prepares once per connection under `name`, then only binds and executes. */
export interface PgPrepared {
  readonly name: string
  readonly text: string
}

export interface PgQueryConfig extends PgPrepared {
  readonly values: ReadonlyArray<unknown>
}

export interface PgClient {
  query<Row = Record<string, unknown>>(text: string, values?: ReadonlyArray<unknown>): Promise<PgQueryResult<Row>>
  query<Row = Record<string, unknown>>(config: PgQueryConfig): Promise<PgQueryResult<Row>>
  release(error?: Error): void
}

export interface PgPool {
  connect(): Promise<PgClient>
  query<Row = Record<string, unknown>>(text: string, values?: ReadonlyArray<unknown>): Promise<PgQueryResult<Row>>
  query<Row = Record<string, unknown>>(config: PgQueryConfig): Promise<PgQueryResult<Row>>
  end(): Promise<void>
}

interface PgModule {
  readonly Pool: new (options: { connectionString: string; max: number; application_name?: string }) => PgPool
}

export const pg = createRequire(import.meta.url)("pg") as PgModule

/**
 * `text` as a named statement. The service's driver (`@effect/sql-pg` 4)
 * prepares every statement once per connection and reuses it; a floor sending
 * unnamed statements would parse and plan each one again, and stop being a
 * floor (a short SELECT: ~0.14 ms unnamed against ~0.07 ms prepared, 2026-11-26).
 * Transaction control (BEGIN, COMMIT) stays a simple query: one message, less
 * than a prepared one.
 */
export const prepared = (text: string): PgPrepared => ({
  name: `bench_${createHash("sha256").update(text).digest("hex").slice(0, 24)}`,
  text
})
