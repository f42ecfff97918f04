/**
 * node-postgres for the floors, typed by hand: the project has no `@types/pg`
 * and declaring the module would change how `@effect/sql-pg`'s own types read.
 */
import { createRequire } from "node:module"

export interface PgQueryResult<Row> {
  readonly rows: Array<Row>
}

export interface PgClient {
  query<Row = Record<string, unknown>>(text: string, values?: ReadonlyArray<unknown>): Promise<PgQueryResult<Row>>
  release(error?: Error): void
}

export interface PgPool {
  connect(): Promise<PgClient>
  query<Row = Record<string, unknown>>(text: string, values?: ReadonlyArray<unknown>): Promise<PgQueryResult<Row>>
  end(): Promise<void>
}

interface PgModule {
  readonly Pool: new (options: { connectionString: string; max: number; application_name?: string }) => PgPool
}

export const pg = createRequire(import.meta.url)("pg") as PgModule
