import { Command } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Data, Effect, Layer, Logger, LogLevel, Option } from "effect"
import type { AdminAnswer } from "../api/AdminSocket"
import { adminSocketPath } from "../app/admin/adminSocketPath"
import { adminCommand, cliOptions } from "../app/admin/commands"
import { reportFailure } from "../app/admin/reportFailure"
import { ServicesLive, StorageLive } from "../app/AppLayer"
import { AppConfig } from "../config/AppConfig"
import { EmbeddedPostgres } from "../db/EmbeddedPostgres"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { Workspaces } from "../tenancy/Workspaces"
import { askServer } from "./askServer"

/** The services over the configured database, every schema migrated first. */
const AdminLive = Layer.effectDiscard(Effect.flatMap(Workspaces, (workspaces) => workspaces.migrateAll)).pipe(
  Layer.provideMerge(ServicesLive),
  Layer.provideMerge(PluginRegistry.Default),
  Layer.provideMerge(StorageLive),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
)

/** The embedded server ran the command: its exit code is this process's. */
class RanByServer extends Data.TaggedError("RanByServer")<{ readonly exitCode: number }> {}

/** No command at all: the help, rather than a connection made for nothing. */
const argv = process.argv.length > 2 ? process.argv : [...process.argv, "--help"]

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
 * Where a command runs. The embedded database is one process's at a time: while
 * the embedded server holds it (its lock names a live process) and answers on
 * its admin socket, the server runs the command and this process prints what it
 * printed. Otherwise the command runs here, over the configured database; an
 * embedded server without an admin socket (an older one) makes the lock refuse,
 * naming it.
 */
const ServerOrHere = Layer.unwrapEffect(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl) || EmbeddedPostgres.holderOf(config.dataDir) === undefined) return AdminLive
    const answer = yield* askServer(adminSocketPath(config.dataDir), argv.slice(2))
    if (Option.isNone(answer)) return AdminLive
    return yield* new RanByServer({ exitCode: yield* printAnswer(answer.value) })
  })
).pipe(Layer.provideMerge(AppConfig.layer))

// The services are built only when a command runs: `--help` and `--version` need no database and no server.
const admin = Command.run(adminCommand.pipe(Command.provide(ServerOrHere)), cliOptions)

admin(argv).pipe(
  Effect.catchTag("RanByServer", ({ exitCode }) =>
    Effect.sync(() => {
      process.exitCode = exitCode
    })
  ),
  Effect.provide(NodeContext.layer),
  Effect.tapErrorCause(reportFailure),
  Effect.provide(Logger.minimumLogLevel(LogLevel.Error)),
  (program) => NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
)
