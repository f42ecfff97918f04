import { Console, Data, Effect, Layer, Option, References } from "effect"
import type { AdminAnswer } from "../api/AdminSocket"
import { adminSocketPath } from "../app/admin/adminSocketPath"
import { ServicesLive, StorageLive } from "../app/AppLayer"
import { AppConfig } from "../config/AppConfig"
import { EmbeddedPostgres } from "../db/EmbeddedPostgres"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { Workspaces } from "../tenancy/Workspaces"
import { askServer } from "./askServer"

/** The services over the configured database, every schema migrated first. */
const AdminLive = Layer.effectDiscard(Effect.flatMap(Workspaces, (workspaces) => workspaces.migrateAll)).pipe(
  Layer.provideMerge(ServicesLive),
  Layer.provideMerge(PluginRegistry.layer),
  Layer.provideMerge(StorageLive),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
)

/** The embedded server ran the command: its exit code is this process's. */
export class RanByServer extends Data.TaggedError("RanByServer")<{ readonly exitCode: number }> {}

const printAnswer = (answer: AdminAnswer) =>
  answer._tag === "Refused"
    ? Effect.as(Console.error(`error: ${answer.message}`), 1)
    : Effect.as(
        Effect.forEach(answer.output, (line) => (line.stream === "stdout" ? Console.log : Console.error)(line.text), {
          discard: true
        }),
        answer.exitCode
      )

/**
 * Where the command `args` (as typed after `admin`) runs, as the services it
 * is given. The embedded database is one process's at a time: while the
 * embedded server holds it (its lock names a live process) and answers on its
 * admin socket, the server runs the command and this process prints what it
 * printed. Otherwise the command runs here, over the configured database; an
 * embedded server without an admin socket (an older one) makes the lock
 * refuse, naming it.
 */
export const serverOrHere = (args: ReadonlyArray<string>) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const config = yield* AppConfig
      if (Option.isSome(config.databaseUrl) || EmbeddedPostgres.holderOf(config.dataDir) === undefined) return AdminLive
      const answer = yield* askServer(adminSocketPath(config.dataDir), args)
      if (Option.isNone(answer)) return AdminLive
      return yield* new RanByServer({ exitCode: yield* printAnswer(answer.value) })
    })
  ).pipe(Layer.provideMerge(AppConfig.layer))
