import { NodeRuntime } from "@effect/platform-node"
import { Cause, Config, ConfigError, Console, Effect, Layer, LogLevel, Option } from "effect"
import { appLayer, loggerLayer } from "./app/AppLayer"
import { AppConfig } from "./config/AppConfig"

/** A start-up failure as one line: a configuration error names the variable, nothing prints a stack. */
export const describeStartupFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (ConfigError.isConfigError(error)) return `configuration error: ${String(error)}`
    if (typeof error === "object" && error !== null && "message" in error) {
      const tag = "_tag" in error ? `${String(error._tag)}: ` : ""
      return `start-up failed: ${tag}${String(error.message)}`
    }
    return `start-up failed: ${String(error)}`
  }
  return `start-up failed: ${Cause.pretty(cause).split("\n")[0]}`
}

const main = Effect.gen(function* () {
  const level = yield* Config.logLevel("LOG_LEVEL").pipe(Config.withDefault(LogLevel.Info))
  return yield* Layer.launch(appLayer(AppConfig.layer)).pipe(Effect.provide(loggerLayer(level)))
}).pipe(
  Effect.catchAllCause((cause) =>
    Cause.isInterruptedOnly(cause)
      ? Effect.void
      : Console.error(describeStartupFailure(cause)).pipe(Effect.zipRight(Effect.sync(() => process.exit(1))))
  )
)

NodeRuntime.runMain(main, { disableErrorReporting: true, disablePrettyLogger: true })
