import { Context, Deferred, Effect, Layer } from "effect"

const make = Effect.gen(function* () {
  const migrated = yield* Deferred.make<void>()
  return {
    /** The platform's and every workspace's migrations are applied (`Workspaces.migrateAll` says so). */
    done: Deferred.succeed(migrated, undefined),
    /** Waits until they are. */
    wait: Deferred.await(migrated)
  } as const
})

/**
 * That this instance's start-up migrations ran: what starts with the layers
 * but reads the schemas (the feed's positioner) waits for it instead of
 * finding a fresh database's tables missing.
 */
export class SchemasMigrated extends Context.Service<SchemasMigrated, Effect.Success<typeof make>>()(
  "SchemasMigrated"
) {
  static readonly layer = Layer.effect(SchemasMigrated, make)
}
