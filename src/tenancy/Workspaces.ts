import { SqlClient } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect, Option, ParseResult, Predicate, Schedule, Schema } from "effect"
import { ReadSqlClient } from "../db/Database"
import { BadRequest, Conflict, NotFound } from "../api/errors"
import { migrateSchema } from "./Migrations"
import { queueTable } from "./migrations/durableQueue"
import { platformMigrations, platformSchema } from "./migrations/platform"
import { workspaceMigrations } from "./migrations/workspace"
import { Workspace } from "../api/Workspace"
import { WorkspaceSlug } from "../api/WorkspaceSlug"
import { excerpt, shorten } from "../messages/inputExcerpt"
import { WorkspaceWork } from "./WorkspaceWork"

const decodeSlug = (input: string) =>
  Schema.decodeUnknown(WorkspaceSlug)(input).pipe(
    Effect.mapError(
      (error) =>
        new BadRequest({
          message: `invalid workspace slug: ${shorten(ParseResult.TreeFormatter.formatErrorSync(error), 200)}`
        })
    )
  )

/** How long DROP SCHEMA waits for one lock before it lets go of all and tries again. */
const dropLockTimeout = "2s"
/** Lock conflicts last as long as the unit in the way: try for about a minute, then fail loudly. */
const dropRetries = Schedule.exponential("50 millis").pipe(Schedule.jittered, Schedule.upTo("60 seconds"))

/**
 * Worth another try: a deadlock (40P01), a lock wait that timed out (55P03),
 * a cancelled statement (57014: a statement timeout, or a cancel meant for an
 * interrupted query that landed on this pooled connection late).
 */
const isTransient = (error: SqlError) => {
  const code = Predicate.hasProperty(error.cause, "code") ? error.cause.code : undefined
  return code === "40P01" || code === "55P03" || code === "57014"
}

/** Tenants: one row in the platform schema and one PostgreSQL schema each. */
export class Workspaces extends Effect.Service<Workspaces>()("Workspaces", {
  dependencies: [WorkspaceWork.Default],
  effect: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const read = yield* ReadSqlClient
    const work = yield* WorkspaceWork
    const workspaces = sql(`${platformSchema}.workspaces`)
    const decodeRow = Schema.decodeUnknown(Workspace)

    const findBySlug = (slug: string) =>
      read`SELECT id, slug, name FROM ${workspaces} WHERE slug = ${slug}`.pipe(
        Effect.flatMap((rows) =>
          rows[0] ? Effect.map(decodeRow(rows[0]), Option.some) : Effect.succeed(Option.none())
        ),
        Effect.orDie
      )

    const get = (slug: string) =>
      findBySlug(slug).pipe(
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.fail(new NotFound({ message: `unknown workspace: ${excerpt(slug)}` })),
            onSome: Effect.succeed
          })
        )
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

    /**
     * Drops the schema, waiting for a lock at most `dropLockTimeout` at a
     * time: a unit still in the schema (another instance's worker, a request
     * that resolved the workspace just before) blocks DROP SCHEMA, or
     * deadlocks with it, until it ends. Such a conflict is tried again.
     */
    const dropSchema = (schema: string) =>
      sql
        .withTransaction(
          Effect.gen(function* () {
            yield* sql`SELECT set_config('lock_timeout', ${dropLockTimeout}, true)`
            yield* sql`DROP SCHEMA IF EXISTS ${sql(schema)} CASCADE`
          })
        )
        .pipe(Effect.retry({ while: isTransient, schedule: dropRetries }))

    /**
     * Drops a workspace and its schema (tests and the CLI's cleanup). Its
     * work stops first: marked as dropping on this instance (its queued
     * elements no longer start here) and its running units interrupted
     * (rolled back); then its row goes, so no instance starts its work any
     * more; then its queued elements; then the schema, with bounded lock
     * waits and retries. A worker elsewhere that still runs one of its
     * elements finishes quietly (see `runDurableWorker`).
     */
    const drop = (workspace: Workspace) =>
      Effect.gen(function* () {
        yield* work.stop(workspace.id)
        yield* sql`DELETE FROM ${workspaces} WHERE id = ${workspace.id}`
        // From here on a failure would leave the schema without its row: transient ones are tried again.
        yield* sql`DELETE FROM ${sql(queueTable)} WHERE completed = FALSE
          AND strpos(element, ${workspace.id}) > 0 AND (element::jsonb #>> '{workspace,id}') = ${workspace.id}`.pipe(
          Effect.retry({ while: isTransient, schedule: dropRetries })
        )
        yield* dropSchema(workspace.schema)
      }).pipe(Effect.ensuring(work.release(workspace.id)), Effect.orDie)

    return { findBySlug, get, list, create, migrateAll, drop } as const
  })
}) {}
