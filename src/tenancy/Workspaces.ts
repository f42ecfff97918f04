import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Option, Schedule, Schema } from "effect"
import { BroadcastBus } from "../broadcast/BroadcastBus"
import { revokeStreams } from "../broadcast/revokeStreams"
import { Caches } from "../cache/Caches"
import { cacheTag } from "../cache/cacheTags"
import { PrimaryReadSqlClient } from "../db/Database"
import { SchemasMigrated } from "../db/SchemasMigrated"
import { isContention } from "../db/DatabaseFault"
import { orDieOnSqlError } from "../db/orDieOnSqlError"
import { BadRequest, Conflict, NotFound } from "../api/errors"
import { migrateSchema } from "./Migrations"
import { queueTable } from "./migrations/durableQueue"
import { platformMigrations, platformSchema } from "./migrations/platform"
import { workspaceMigrations } from "./migrations/workspace"
import { Workspace } from "../api/Workspace"
import { WorkspaceSlug } from "../api/WorkspaceSlug"
import { excerpt, shorten } from "../messages/inputExcerpt"
import { WorkspaceWork } from "./WorkspaceWork"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { titleIndexStatement } from "../plugins/titleSearch"

const decodeSlug = (input: string) =>
  Schema.decodeUnknownEffect(WorkspaceSlug)(input).pipe(
    Effect.mapError((error) => new BadRequest({ message: `invalid workspace slug: ${shorten(error.message, 200)}` }))
  )

/** How long DROP SCHEMA waits for one lock before it lets go of all and tries again. */
const dropLockTimeout = "2s"
/** Lock conflicts last as long as the unit in the way: try for about a minute, then fail loudly. */
const dropRetries = Schedule.exponential("50 millis").pipe(Schedule.jittered, Schedule.upTo({ duration: "60 seconds" }))

/** Tenants: one row in the platform schema and one PostgreSQL schema each. */
export class Workspaces extends Context.Service<Workspaces>()("Workspaces", {
  make: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const migrated = yield* SchemasMigrated
    const read = yield* PrimaryReadSqlClient
    const work = yield* WorkspaceWork
    const workspaces = sql(`${platformSchema}.workspaces`)
    const caches = yield* Caches
    const bus = yield* BroadcastBus

    const registry = yield* PluginRegistry

    /**
     * The title search index of each business object (docs/web.md, "Lists"):
     * made of its title rule, which is plugin code, so it is made here rather
     * than by a migration, and again when a rule changes.
     */
    const indexTitles = (schema: string) =>
      Effect.forEach(
        registry.plugins.flatMap((plugin) =>
          Object.entries(plugin.businessObjects).map(([name, declaration]) =>
            titleIndexStatement(schema, `${plugin.namespace}/${name}`, declaration.title)
          )
        ),
        (statement) => sql.unsafe(statement),
        { discard: true }
      )

    const bySlug = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Workspace,
      execute: (slug) => read`SELECT id, slug, name FROM ${workspaces} WHERE slug = ${slug}`
    })

    const cached = yield* caches.make({
      lookup: (slug: string) => Effect.orDie(bySlug(slug)),
      tags: (_, workspace) => Option.match(workspace, { onNone: () => [], onSome: (w) => [cacheTag.workspace(w.id)] }),
      keep: Option.isSome
    })

    const findBySlug = cached.get

    const get = (slug: string) =>
      findBySlug(slug).pipe(
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.fail(new NotFound({ message: `unknown workspace: ${excerpt(slug)}` })),
            onSome: Effect.succeed
          })
        )
      )

    const list = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Workspace,
      execute: () => sql`SELECT id, slug, name FROM ${workspaces} ORDER BY slug`
    })(undefined).pipe(Effect.orDie)

    /** The new workspace's row; none when the slug is taken (a duplicate the caller can act on). */
    const insert = SqlSchema.findOneOption({
      Request: Schema.Struct({ slug: Schema.String, name: Schema.String }),
      Result: Workspace,
      // Two creates of one slug at once: the second waits for the first and then inserts nothing.
      execute: (row) =>
        sql`INSERT INTO ${workspaces} ${sql.insert(row)} ON CONFLICT (slug) DO NOTHING RETURNING id, slug, name`
    })

    /** Creates the workspace row and its schema, migrated, in one transaction: all or nothing. */
    const create = (slugInput: string, name?: string) =>
      Effect.gen(function* () {
        const slug = yield* decodeSlug(slugInput)
        const inserted = yield* insert({ slug, name: name ?? slug }).pipe(Effect.orDie)
        if (Option.isNone(inserted))
          return yield* new Conflict({ message: `workspace ${excerpt(slug)} already exists` })
        yield* migrateSchema(inserted.value.schema, workspaceMigrations)
        yield* indexTitles(inserted.value.schema)
        return inserted.value
      }).pipe(sql.withTransaction, orDieOnSqlError)

    /**
     * Migrates one workspace's schema while holding its row, so that a
     * workspace dropped meanwhile is skipped rather than brought back as an
     * orphan schema (`drop` deletes the row first, and waits for this lock).
     */
    const migrateWorkspace = (workspace: Workspace) =>
      Effect.gen(function* () {
        const live = yield* sql`SELECT 1 FROM ${workspaces} WHERE id = ${workspace.id} FOR KEY SHARE`
        if (live.length > 0) {
          yield* migrateSchema(workspace.schema, workspaceMigrations)
          yield* indexTitles(workspace.schema)
        }
      }).pipe(sql.withTransaction, Effect.orDie)

    /** Brings the platform schema and every workspace schema up to date (start-up). */
    const migrateAll = Effect.gen(function* () {
      yield* migrateSchema(platformSchema, platformMigrations)
      const all = yield* list
      yield* Effect.forEach(all, migrateWorkspace, { discard: true })
      yield* migrated.done
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
        .pipe(Effect.retry({ while: isContention, schedule: dropRetries }))

    /** The workspace's elements not yet done, in every durable queue. */
    const deleteWaitingWork = (workspace: Workspace) =>
      sql`DELETE FROM ${sql(queueTable)} WHERE state <> 'completed'
        AND strpos(element, ${workspace.id}) > 0 AND (element::jsonb #>> '{workspace,id}') = ${workspace.id}`.pipe(
        Effect.retry({ while: isContention, schedule: dropRetries })
      )

    /**
     * Drops a workspace and its schema (`admin workspace drop`, tests). Its
     * work stops first: marked as dropping on this instance (its queued
     * elements no longer start here) and its running units interrupted
     * (rolled back); then its row goes, so no instance starts its work any
     * more, and every instance forgets it and ends its streams; then its
     * queued elements; then the schema, with bounded lock waits and retries;
     * then what a unit still running in it queued meanwhile. A worker
     * elsewhere that still runs one of its elements finishes quietly (see
     * `runDurableWorker`).
     */
    const drop = (workspace: Workspace) =>
      Effect.gen(function* () {
        yield* work.stop(workspace.id)
        yield* sql`DELETE FROM ${workspaces} WHERE id = ${workspace.id}`
        // Its sessions went with the row; what any instance holds of it goes now, and so do its open streams.
        yield* caches.invalidate({ _tag: "Workspace", workspaceId: workspace.id })
        yield* revokeStreams(bus, { _tag: "Workspace", workspaceId: workspace.id, reason: "workspace-removed" })
        // From here on a failure would leave the schema without its row: transient ones are tried again.
        yield* deleteWaitingWork(workspace)
        yield* dropSchema(workspace.schema)
        // A unit that resolved the workspace before its row went may have queued work and committed since.
        yield* deleteWaitingWork(workspace)
      }).pipe(Effect.ensuring(work.release(workspace.id)), Effect.orDie)

    return { findBySlug, get, list, create, migrateAll, drop } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(WorkspaceWork.layer))
}
