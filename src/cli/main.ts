import { CliOutput, Command } from "effect/cli"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { ConfigProvider, Effect, Layer, References } from "effect"
import { adminCommand, adminPresenter, cliOptions } from "../app/admin/commands"
import { reportFailure } from "../app/admin/reportFailure"
import { environment } from "../config/AppConfig"
import { guardJsonParse } from "../json/parseJson"

/** No command at all: the help, rather than a connection made for nothing. */
const args = process.argv.length > 2 ? process.argv.slice(2) : ["--help"]

/**
 * Where the command runs and over which services (whereToRun.ts): built only
 * when a command runs, and its module, which imports every service and the
 * database drivers, loaded only then: `--help`, `--version` and a rejected
 * argument load none of them.
 */
const ServerOrHere = Layer.unwrap(
  Effect.promise(() => import("./whereToRun")).pipe(Effect.map((where) => where.serverOrHere(args)))
)

const admin = Command.runWith(adminCommand.pipe(Command.provide(ServerOrHere)), cliOptions)

guardJsonParse()

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
