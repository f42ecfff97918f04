import { SqlClient } from "@effect/sql"
import { ReadSqlClient } from "../db/Database"
import { Effect, Option, ParseResult, Schema } from "effect"
import { BadRequest, Conflict, NotFound } from "../errors"
import { migrateSchema } from "./Migrations"
import { platformMigrations, platformSchema } from "./migrations/platform"
import { workspaceMigrations } from "./migrations/workspace"
import { Workspace } from "./Workspace"
import { WorkspaceSlug } from "./WorkspaceSlug"
import { excerpt, shorten } from "../messages/inputExcerpt"

const decodeSlug = (input: string) =>
  Schema.decodeUnknown(WorkspaceSlug)(input).pipe(
    Effect.mapError(
      (error) => new BadRequest({ message: `invalid workspace slug: ${shorten(ParseResult.TreeFormatter.formatErrorSync(error), 200)}` })
    )
  )

/** Tenants: one row in the platform schema and one PostgreSQL schema each. */
export class Workspaces extends Effect.Service<Workspaces>()("Workspaces", {
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const read = yield* ReadSqlClient
    const workspaces = sql(`${platformSchema}.workspaces`)
    const decodeRow = Schema.decodeUnknown(Workspace)

    const findBySlug = (slug: string) =>
      read`SELECT id, slug, name FROM ${workspaces} WHERE slug = ${slug}`.pipe(
        Effect.flatMap((rows) => (rows[0] ? Effect.map(decodeRow(rows[0]), Option.some) : Effect.succeed(Option.none()))),
        Effect.orDie
      )

    const get = (slug: string) =>
      findBySlug(slug).pipe(
        Effect.flatMap(Option.match({
          onNone: () => Effect.fail(new NotFound({ message: `unknown workspace: ${excerpt(slug)}` })),
          onSome: Effect.succeed
        }))
      )

    const list = sql`SELECT id, slug, name FROM ${workspaces} ORDER BY slug`.pipe(
      Effect.flatMap(Schema.decodeUnknown(Schema.Array(Workspace))),
      Effect.orDie
    )

    /** Creates the workspace row and its schema, migrated, in one transaction: all or nothing. */
    const create = (slugInput: string, name?: string) =>
      Effect.gen(function* () {
        const slug = yield* decodeSlug(slugInput)
        // Two creates of one slug at once: the second waits for the first and then inserts nothing.
        const rows = yield* sql`INSERT INTO ${workspaces} ${sql.insert({ slug, name: name ?? slug })}
          ON CONFLICT (slug) DO NOTHING RETURNING id, slug, name`
        if (rows.length === 0) return yield* new Conflict({ message: `workspace ${excerpt(slug)} already exists` })
        const workspace = yield* decodeRow(rows[0])
        yield* migrateSchema(workspace.schema, workspaceMigrations)
        return workspace
      }).pipe(
        sql.withTransaction,
        Effect.catchTags({ SqlError: Effect.die, ParseError: Effect.die, MigrationError: Effect.die })
      )

    /**
     * Migrates one workspace's schema while holding its row, so that a
     * workspace dropped meanwhile is skipped rather than brought back as an
     * orphan schema (`drop` deletes the row first, and waits for this lock).
     */
    const migrateWorkspace = (workspace: Workspace) =>
      Effect.gen(function* () {
        const live = yield* sql`SELECT 1 FROM ${workspaces} WHERE id = ${workspace.id} FOR KEY SHARE`
        if (live.length > 0) yield* migrateSchema(workspace.schema, workspaceMigrations)
      }).pipe(sql.withTransaction)

    /** Brings the platform schema and every workspace schema up to date (start-up). */
    const migrateAll = Effect.gen(function* () {
      yield* migrateSchema(platformSchema, platformMigrations)
      const all = yield* list
      yield* Effect.forEach(all, migrateWorkspace, { discard: true })
      return all.length
    })

    /** Drops a workspace and its schema (tests and the CLI's cleanup). */
    const drop = (workspace: Workspace) =>
      Effect.gen(function* () {
        yield* sql`DELETE FROM ${workspaces} WHERE id = ${workspace.id}`
        yield* sql`DROP SCHEMA IF EXISTS ${sql(workspace.schema)} CASCADE`
      }).pipe(sql.withTransaction, Effect.orDie)

    return { findBySlug, get, list, create, migrateAll, drop } as const
  })
}) {}
