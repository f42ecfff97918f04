import { CliOutput, Command } from "effect/cli"
import { NodeServices, NodeRuntime } from "@effect/platform-node"
import { ConfigProvider, Console, Data, Effect, Layer, Option, References } from "effect"
import type { AdminAnswer } from "../api/AdminSocket"
import { adminSocketPath } from "../app/admin/adminSocketPath"
import { adminCommand, adminPresenter, cliOptions } from "../app/admin/commands"
import { reportFailure } from "../app/admin/reportFailure"
import { ServicesLive, StorageLive } from "../app/AppLayer"
import { AppConfig, environment } from "../config/AppConfig"
import { EmbeddedPostgres } from "../db/EmbeddedPostgres"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { Workspaces } from "../tenancy/Workspaces"
import { answerConfirmed } from "./answerConfirmed"
import { askServer } from "./askServer"

/** The services over the configured database, every schema migrated first. */
const AdminLive = Layer.effectDiscard(Effect.flatMap(Workspaces, (workspaces) => workspaces.migrateAll)).pipe(
  Layer.provideMerge(ServicesLive),
  Layer.provideMerge(PluginRegistry.layer),
  Layer.provideMerge(StorageLive),
  Layer.provide(Layer.succeed(References.MinimumLogLevel, "Error"))
)

/** The embedded server ran the command: its exit code is this process's. */
class RanByServer extends Data.TaggedError("RanByServer")<{ readonly exitCode: number }> {}

/** No command at all: the help, rather than a connection made for nothing. */
const argv = process.argv.length > 2 ? process.argv : [...process.argv, "--help"]

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
 * Where a command runs. The embedded database is one process's at a time: while
 * the embedded server holds it (its lock names a live process) and answers on
 * its admin socket, the server runs the command and this process prints what it
 * printed (a destructive command is confirmed on this terminal when the server
 * asks for it). Otherwise the command runs here, over the configured database; an
 * embedded server without an admin socket (an older one) makes the lock refuse,
 * naming it.
 */
const ServerOrHere = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl) || EmbeddedPostgres.holderOf(config.dataDir) === undefined) return AdminLive
    const path = adminSocketPath(config.dataDir)
    const asked = yield* askServer(path, argv.slice(2))
    const answer = Option.isNone(asked) ? asked : yield* answerConfirmed(path, argv.slice(2), asked.value)
    if (Option.isNone(answer)) return AdminLive
    return yield* new RanByServer({ exitCode: yield* printAnswer(answer.value) })
  })
).pipe(Layer.provideMerge(AppConfig.layer))

// The services are built only when a command runs: `--help` and `--version` need no database and no server.
const admin = Command.runWith(adminCommand.pipe(Command.provide(ServerOrHere)), cliOptions)

admin(argv.slice(2)).pipe(
  Effect.provideService(CliOutput.Presenter, adminPresenter),
  Effect.catchTag("RanByServer", ({ exitCode }) =>
    Effect.sync(() => {
      process.exitCode = exitCode
    })
  ),
  Effect.provide(NodeServices.layer),
  Effect.tapCause(reportFailure),
  Effect.provideService(References.MinimumLogLevel, "Error"),
  Effect.provideService(ConfigProvider.ConfigProvider, environment()),
  (program) => NodeRuntime.runMain(program, { disableErrorReporting: true })
)
