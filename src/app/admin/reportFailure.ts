import { CliError } from "effect/cli"
import { Cause, Config, Console, Effect, Option } from "effect"
import { configErrorLines } from "../../config/configErrorLines"

/** One line on standard error (one per wrong variable of the configuration), whatever a command failed with. */
export const reportFailure = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.findErrorOption(cause)
  // The command line has already printed its own message (and the help) for bad arguments.
  if (Option.isSome(failure) && CliError.isCliError(failure.value)) return Effect.void
  const error = Option.getOrUndefined(failure)
  if (error instanceof Config.ConfigError)
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
