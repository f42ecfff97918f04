import { SqlClient, SqlSchema } from "effect/sql"
import { Context, Effect, Layer, Schema } from "effect"
import type { Actor } from "../api/Actor"
import { orDieOnSqlError } from "../db/orDieOnSqlError"
import { withActor } from "../context/Frames"
import type { Plugin } from "../plugins/Plugin"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { Records } from "../records/Records"
import type { Workspace } from "../api/Workspace"
import { UnitOfWork } from "../unitOfWork/UnitOfWork"

export const seederActor = (plugin: string): Actor => ({ kind: "system", name: `seeder:${plugin}` })

const SeededRow = Schema.Struct({ key: Schema.String, recordId: Schema.String })

export interface SeedResult {
  readonly plugin: string
  /** Seed records written now; 0 when the workspace had them all already. */
  readonly written: number
}

/**
 * Writes each plugin's seed data into a workspace, as `seeder:<plugin>`, one
 * unit of work per plugin. Every item is written once: its key is recorded
 * with the record it made, so seeding again writes only what is new (and does
 * not bring back a seeded record someone has since deleted).
 */
export class Seeders extends Context.Service<Seeders>()("Seeders", {
  make: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const registry = yield* PluginRegistry
    const records = yield* Records
    const units = yield* UnitOfWork

    const seedPlugin = (workspace: Workspace, plugin: Plugin, items: NonNullable<Plugin["seed"]>) =>
      units
        .run(
          workspace,
          Effect.gen(function* () {
            const seeds = sql(workspace.table("plugin_seeds"))
            // Two seeders of one plugin at once: the second waits, then finds everything written.
            yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`seed:${workspace.schema}:${plugin.namespace}`}))`
            const rows = yield* SqlSchema.findAll({
              Request: Schema.String,
              Result: SeededRow,
              execute: (namespace) => sql`SELECT key, record_id FROM ${seeds} WHERE plugin = ${namespace}`
            })(plugin.namespace).pipe(Effect.orDie)
            const seeded = new Map(rows.map((row) => [row.key, row.recordId]))
            let written = 0
            for (const item of items) {
              if (seeded.has(item.key)) continue
              const values = item.values((key) => {
                const id = seeded.get(key)
                if (id === undefined)
                  throw new Error(`seed item ${item.key} of ${plugin.namespace} refers to ${key}, not seeded before it`)
                return id
              })
              const record = yield* records.create(item.businessObject, values)
              yield* sql`INSERT INTO ${seeds} ${sql.insert({
                plugin: plugin.namespace,
                key: item.key,
                businessObject: item.businessObject,
                recordId: record.id
              })}`
              seeded.set(item.key, record.id)
              written++
            }
            return { plugin: plugin.namespace, written }
          }).pipe(orDieOnSqlError)
        )
        .pipe(withActor(seederActor(plugin.namespace)))

    /** Seeds every plugin that has seed data. */
    const seedWorkspace = (workspace: Workspace) =>
      Effect.forEach(registry.plugins, (plugin) =>
        plugin.seed && plugin.seed.length > 0 ? seedPlugin(workspace, plugin, plugin.seed) : Effect.succeed(null)
      ).pipe(Effect.map((results) => results.filter((result): result is SeedResult => result !== null)))

    return { seedWorkspace } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
