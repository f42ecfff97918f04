import { Command, ValidationError } from "@effect/cli"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Cause, ConfigError, Console, Effect, Layer, Logger, LogLevel, Option } from "effect"
import { ServicesLive, StorageLive } from "../app/AppLayer"
import { AppConfig } from "../config/AppConfig"
import { configErrorLines } from "../config/configErrorLines"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { Workspaces } from "../tenancy/Workspaces"
import { adminCommand, cliOptions } from "./commands"

/** The services over the configured database, every schema migrated first. */
const AdminLive = Layer.effectDiscard(Effect.flatMap(Workspaces, (workspaces) => workspaces.migrateAll)).pipe(
  Layer.provideMerge(ServicesLive),
  Layer.provideMerge(PluginRegistry.Default),
  Layer.provideMerge(StorageLive),
  Layer.provideMerge(AppConfig.layer),
  Layer.provide(Logger.minimumLogLevel(LogLevel.Error))
)

/** One line on standard error (one per wrong variable of the configuration) and exit code 1, whatever went wrong. */
const reportFailure = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.failureOption(cause)
  // @effect/cli has already printed its own message for bad arguments.
  if (Option.isSome(failure) && ValidationError.isValidationError(failure.value)) return Effect.void
  const error = Option.getOrUndefined(failure)
  if (ConfigError.isConfigError(error))
    return Console.error(
      configErrorLines(error)
        .map((line) => `configuration error: ${line}`)
        .join("\n")
    )
  const message =
    typeof error === "object" && error !== null && "message" in error
      ? String(error.message)
      : Cause.pretty(cause).split("\n")[0]
  return Console.error(`error: ${message}`)
}

/** No command at all: the help, rather than a connection made for nothing. */
const argv = process.argv.length > 2 ? process.argv : [...process.argv, "--help"]

// The services are built only when a command runs: `--help` and `--version` need no database.
const admin = Command.run(adminCommand.pipe(Command.provide(AdminLive)), cliOptions)

admin(argv).pipe(
  Effect.provide(NodeContext.layer),
  Effect.tapErrorCause(reportFailure),
  Effect.provide(Logger.minimumLogLevel(LogLevel.Error)),
  (program) => NodeRuntime.runMain(program, { disableErrorReporting: true, disablePrettyLogger: true })
)
