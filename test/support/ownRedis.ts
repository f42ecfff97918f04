import { execFile, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { freePort } from "./freePort"
import { Effect, Logger, References } from "effect"

// A redis-server of the test's own, and a logger that keeps what it is given.

const exited = (child: ChildProcess) =>
  Effect.callback<void>((resume) => {
    if (child.exitCode !== null || child.signalCode !== null) return resume(Effect.void)
    const onExit = () => resume(Effect.void)
    child.once("exit", onExit)
    return Effect.sync(() => child.off("exit", onExit))
  })

/** Signals the process and waits for it to be gone (SIGKILL after 5 s). */
const terminate = (child: ChildProcess, signal: NodeJS.Signals) =>
  Effect.sync(() => child.kill(signal)).pipe(
    Effect.andThen(exited(child)),
    Effect.timeout("5 seconds"),
    Effect.catch(() => Effect.sync(() => child.kill("SIGKILL")).pipe(Effect.andThen(exited(child))))
  )

/** Runs `redis-cli -p <port> <args>`; its output, trimmed. */
export const redisCli = (port: number, ...args: ReadonlyArray<string>) =>
  Effect.callback<string, Error>((resume) => {
    const child = execFile("redis-cli", ["-p", String(port), ...args], { timeout: 2_000 }, (error, stdout) =>
      resume(error ? Effect.fail(error) : Effect.succeed(stdout.trim()))
    )
    return Effect.sync(() => child.kill("SIGKILL"))
  })

/**
 * A redis-server on a free port, no persistence. `stop` ends it (SIGTERM: a
 * clean shutdown, nothing saved); `start` starts it again on the same port.
 * Whatever is running when the scope closes is killed.
 */
export const ownRedis = Effect.gen(function* () {
  const port = yield* freePort
  let current: ChildProcess | undefined
  yield* Effect.addFinalizer(() =>
    Effect.suspend(() => (current === undefined ? Effect.void : terminate(current, "SIGKILL")))
  )

  const start = Effect.gen(function* () {
    const launched = yield* Effect.sync(() => {
      const child = spawn(
        "redis-server",
        ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        {
          stdio: ["ignore", "pipe", "pipe"]
        }
      )
      current = child
      let output = ""
      const ready = new Promise<void>((resolve, reject) => {
        child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
          output += chunk
          if (output.includes("Ready to accept connections")) resolve()
        })
        child.once("error", reject)
        child.once("exit", (code) => reject(new Error(`redis-server on ${port} exited (${String(code)}): ${output}`)))
      })
      ready.catch(() => undefined)
      return ready
    })
    yield* Effect.tryPromise(() => launched).pipe(Effect.timeout("10 seconds"), Effect.orDie)
  })

  const stop = Effect.suspend(() => {
    const child = current
    current = undefined
    return child === undefined ? Effect.void : terminate(child, "SIGTERM")
  })

  /** How many clients of this Redis are subscribed to a broadcast hint channel (`<REDIS_PREFIX>broadcast`). */
  const subscribers = Effect.gen(function* () {
    const channels = (yield* redisCli(port, "pubsub", "channels", "*broadcast")).split("\n").filter((c) => c !== "")
    if (channels.length === 0) return 0
    const counts = (yield* redisCli(port, "pubsub", "numsub", ...channels)).split("\n")
    return channels.reduce((sum, _, i) => sum + Number(counts[2 * i + 1]), 0)
  })

  yield* start
  return { port, url: `redis://127.0.0.1:${port}`, start, stop, subscribers }
})

export interface Logged {
  readonly level: string
  readonly message: ReadonlyArray<unknown>
  readonly annotations: Readonly<Record<string, unknown>>
}

/** A logger that keeps what it is given; add it to an app with `Layer.provide(collected.layer)`. */
export const collectLogs = () => {
  const entries: Array<Logged> = []
  const logger = Logger.make<unknown, void>(({ fiber, logLevel, message }) => {
    const parts: ReadonlyArray<unknown> = Array.isArray(message) ? message : [message]
    entries.push({
      // Effect 3's names (`WARN`, `ERROR`), which the tests compare with.
      level: logLevel.toUpperCase(),
      message: parts,
      annotations: { ...fiber.getRef(References.CurrentLogAnnotations) }
    })
  })
  return { entries, logger, layer: Logger.layer([logger], { mergeWithExisting: true }) }
}
