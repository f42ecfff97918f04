import { CliOutput, Command } from "effect/cli"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { ConfigProvider, Effect, Layer, References } from "effect"
import { adminCommand, adminPresenter, cliOptions } from "../app/admin/commands"
import { reportFailure } from "../app/admin/reportFailure"
import { environment } from "../config/AppConfig"

/** No command at all: the help, rather than a connection made for nothing. */
const args = process.argv.length > 2 ? process.argv.slice(2) : ["--help"]

/**
 * Where the command runs (whereToRun.ts), over which services: built only when
 * a command runs, and its module, which holds every service of the service,
 * loaded only then, so that `--help`, `--version` and a rejected argument
 * load neither the services nor the database drivers.
 */
const ServerOrHere = Layer.unwrap(
  Effect.promise(() => import("./whereToRun")).pipe(Effect.map((where) => where.serverOrHere(args)))
)

const admin = Command.runWith(adminCommand.pipe(Command.provide(ServerOrHere)), cliOptions)

admin(args).pipe(
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
