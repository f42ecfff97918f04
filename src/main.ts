import type { Teardown } from "effect/Runtime"
import { NodeRuntime } from "@effect/platform-node"
import { Cause, Config, ConfigProvider, Console, Duration, Effect, Exit, Layer, Option } from "effect"
import { appLayer, loggerLayer } from "./app/AppLayer"
import { AppConfig, appConfig, environment, logFormatConfig, logLevelConfig, reportingEvery } from "./config/AppConfig"
import { configErrorLines } from "./config/configErrorLines"

/**
 * A start-up failure as one line, or one line per wrong variable of the
 * configuration (each naming it); nothing prints a stack.
 */
export const describeStartupFailure = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.findErrorOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    if (error instanceof Config.ConfigError)
      return configErrorLines(error)
        .map((line) => `configuration error: ${line}`)
        .join("\n")
    if (typeof error === "object" && error !== null && "message" in error) {
      // The tag's last segment: Effect 4's library errors are tagged by module path (`effect/sql/SqlError`).
      const tag = "_tag" in error ? `${String(error._tag).split("/").at(-1)}: ` : ""
      return `start-up failed: ${tag}${String(error.message)}`
    }
    return `start-up failed: ${String(error)}`
  }
  return `start-up failed: ${Cause.pretty(cause).split("\n")[0]}`
}

/** What closing the pools and Redis may take after the drain, before the last-resort exit. */
const closeGrace = Duration.seconds(5)

/**
 * `NodeRuntime.runMain` interrupts the app on the first SIGTERM or SIGINT (the
 * app then drains, see `GracefulShutdown`, and exits 0) and stops listening
 * for signals. These listeners stay, so that a repeated signal does not end
 * the drain: one Ctrl-C under `npm start` reaches the service twice (from the
 * terminal and relayed by npm). They also arm a last-resort exit (status 1)
 * in case closing hangs past the drain and `closeGrace`.
 */
const guardShutdown = (logger: Layer.Layer<never>, drainTimeout: Duration.Duration) =>
  Effect.sync(() => {
    const log = (effect: Effect.Effect<void>) => Effect.runSync(effect.pipe(Effect.provide(logger)))
    let stopping = false
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return log(Effect.logInfo(`shutdown: ${signal} received again; the drain goes on`))
      stopping = true
      log(Effect.logInfo(`shutdown: ${signal} received`))
      setTimeout(
        () => {
          log(Effect.logError("shutdown: still running after the drain and the close grace; exiting now"))
          process.exit(1)
        },
        Duration.toMillis(Duration.sum(drainTimeout, closeGrace))
      ).unref()
    }
    process.on("SIGINT", onSignal)
    process.on("SIGTERM", onSignal)
  })

const main = Effect.gen(function* () {
  // Read together, so that every wrong variable is reported at once, before anything starts.
  const { config, level, format } = yield* Config.all({
    level: logLevelConfig,
    format: logFormatConfig,
    config: appConfig
  }).pipe(reportingEvery([logLevelConfig, logFormatConfig, appConfig]))
  const logger = loggerLayer(level, format)
  yield* guardShutdown(logger, config.drainTimeout)
  return yield* Layer.launch(appLayer(Layer.succeed(AppConfig, config))).pipe(Effect.provide(logger))
}).pipe(
  Effect.catchCause((cause) =>
    Cause.hasInterruptsOnly(cause)
      ? Effect.void
      : Console.error(describeStartupFailure(cause)).pipe(Effect.andThen(Effect.sync(() => process.exit(1))))
  ),
  Effect.provideService(ConfigProvider.ConfigProvider, environment())
)

/** After a signal: 0 once the app has closed, unless closing it failed (a bug): then its cause on stderr, and 1. */
const teardown: Teardown = (exit, onExit) => {
  if (Exit.isFailure(exit) && !Cause.hasInterruptsOnly(exit.cause)) {
    process.stderr.write(`shutdown failed: ${Cause.pretty(exit.cause)}\n`)
    return onExit(1)
  }
  onExit(0)
}

NodeRuntime.runMain(main, { disableErrorReporting: true, teardown })
