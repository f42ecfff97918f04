import { Console, Data, Effect, Layer, Option, References } from "effect"
import type { AdminAnswer } from "../api/AdminSocket"
import { adminSocketPath } from "../app/admin/adminSocketPath"
import { adminCommand } from "../app/admin/commands"
import { CommandSecret, secretAskedBy } from "../app/admin/CommandSecret"
import { ServicesLive, StorageLive } from "../app/AppLayer"
import { TracingLive } from "../app/TracingLive"
import { AppConfig } from "../config/AppConfig"
import { EmbeddedPostgres } from "../db/EmbeddedPostgres"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { Workspaces } from "../tenancy/Workspaces"
import { answerConfirmed } from "./answerConfirmed"
import { askServer } from "./askServer"
import { readSecret } from "./readSecret"

/**
 * The services over the configured database, every schema migrated first.
 * Traced as the server is (`TracingLive`): without an OTLP endpoint tracing
 * is off, where Effect's default would make and drop a span for every
 * statement and hint (a bulk import's thousand hints a batch).
 */
const AdminLive = Layer.effectDiscard(Effect.flatMap(Workspaces, (workspaces) => workspaces.migrateAll)).pipe(
  Layer.provideMerge(ServicesLive),
  Layer.provideMerge(PluginRegistry.layer),
  Layer.provideMerge(StorageLive),
  Layer.provideMerge(TracingLive),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
)

/** The embedded server ran the command: its exit code is this process's. */
export class RanByServer extends Data.TaggedError("RanByServer")<{ readonly exitCode: number }> {}

const printAnswer = (answer: AdminAnswer) => {
  switch (answer._tag) {
    case "Refused":
      return Effect.as(Console.error(`error: ${answer.message}`), 1)
    case "NeedsConfirmation":
      return Effect.as(Console.error("error: the server asked again for a confirmation already given"), 1)
    case "Ran":
      return Effect.as(
        Effect.forEach(answer.output, (line) => (line.stream === "stdout" ? Console.log : Console.error)(line.text), {
          discard: true
        }),
        answer.exitCode
      )
  }
}

/**
 * Where the command `args` (as typed after `admin`) runs, as the services it
 * is given. First the secret it asks for, if any, is read here, from the
 * terminal or standard input. The embedded database is one process's at a
 * time: while the embedded server holds it (its lock names a live process)
 * and answers on its admin socket, the server runs the command, the secret
 * inside the request, and this process prints what it printed (a
 * destructive command is confirmed on this terminal when the server asks
 * for it, and sent again with what was typed). Otherwise the
 * command runs here, over the configured database; an embedded server
 * without an admin socket (an older one) makes the lock refuse, naming it.
 */
export const serverOrHere = (args: ReadonlyArray<string>) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const config = yield* AppConfig
      const asked = secretAskedBy(adminCommand, args)
      const secret = asked === undefined ? Option.none() : Option.some(yield* readSecret(asked))
      const here = Layer.merge(AdminLive, Layer.succeed(CommandSecret, secret))
      if (Option.isSome(config.databaseUrl) || EmbeddedPostgres.holderOf(config.dataDir) === undefined) return here
      const path = adminSocketPath(config.dataDir)
      const first = yield* askServer(path, args, { secret })
      const answer = Option.isNone(first) ? first : yield* answerConfirmed(path, args, first.value, secret)
      if (Option.isNone(answer)) return here
      return yield* new RanByServer({ exitCode: yield* printAnswer(answer.value) })
    })
  ).pipe(Layer.provideMerge(AppConfig.layer))
