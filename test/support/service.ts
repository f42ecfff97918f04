import { spawn } from "node:child_process"
import { Deferred, Effect, Ref } from "effect"
import type { Duration, Scope } from "effect"
import { freePort } from "./freePort"
import { testDatabaseUrl, testRedisUrl } from "./TestApp"

/** One line of the service's JSON log (`Logger.json`). */
export interface ServiceLogLine {
  readonly message: unknown
  readonly logLevel: string
  readonly annotations: Record<string, unknown>
}

export interface ProcessExit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface RunningService {
  readonly pid: number
  readonly base: string
  readonly logs: Effect.Effect<ReadonlyArray<ServiceLogLine>>
  /** Waits (up to `timeout`) for a log line whose message is `message`; returns it. */
  readonly waitForLog: (message: string, timeout?: Duration.Input) => Effect.Effect<ServiceLogLine>
  readonly signal: (signal: NodeJS.Signals) => Effect.Effect<void>
  /** Waits (up to 60 s) for the process to exit. */
  readonly exited: Effect.Effect<ProcessExit>
  /** stdout and stderr so far, for failure messages. */
  readonly output: Effect.Effect<string>
}

/** Whether any process of process group `pgid` is still alive. */
export const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Starts `command` (by default the service as `npm start` ends up running it:
 * `node --import tsx src/main.ts`) in a process group of its own, on a free
 * port, over the tests' PostgreSQL and Redis, with `env` on top (an `undefined`
 * value removes a variable: no `DATABASE_URL` is the embedded mode); resolves once
 * it logs that it listens. Whatever of its group is still running when the
 * scope closes is killed.
 */
export const startService = (
  env: Record<string, string | undefined> = {},
  command: ReadonlyArray<string> = ["node", "--import", "tsx", "src/main.ts"]
): Effect.Effect<RunningService, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const port = yield* freePort
    const lines = yield* Ref.make<ReadonlyArray<ServiceLogLine>>([])
    const output = yield* Ref.make("")
    const exit = yield* Deferred.make<ProcessExit>()
    const [program = "node", ...args] = command
    const child = yield* Effect.acquireRelease(
      Effect.sync(() =>
        spawn(program, args, {
          cwd: process.cwd(),
          detached: true,
          stdio: ["ignore", "pipe", "pipe"],
          env: {
            ...process.env,
            HOST: "127.0.0.1",
            PORT: String(port),
            DATABASE_URL: testDatabaseUrl,
            REDIS_URL: testRedisUrl,
            LOG_LEVEL: "Info",
            QUEUE_POLL_MS: "50",
            JOB_RETRY_BASE_MS: "50",
            ...env
          }
        })
      ),
      (child) =>
        Effect.sync(() => {
          if (child.pid !== undefined && groupAlive(child.pid)) process.kill(-child.pid, "SIGKILL")
        })
    )
    const pid = child.pid
    if (pid === undefined) return yield* Effect.fail(new Error(`${program} did not start`))
    let partial = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      Effect.runSync(Ref.update(output, (all) => all + chunk))
      partial += chunk
      const complete = partial.split("\n")
      partial = complete.pop() ?? ""
      for (const line of complete) {
        if (!line.startsWith("{")) continue
        try {
          const parsed = JSON.parse(line) as ServiceLogLine
          Effect.runSync(Ref.update(lines, (all) => [...all, parsed]))
        } catch {
          // not a log line
        }
      }
    })
    child.stderr
      .setEncoding("utf8")
      .on("data", (chunk: string) => Effect.runSync(Ref.update(output, (all) => all + chunk)))
    child.once("exit", (code, signal) => Effect.runSync(Deferred.succeed(exit, { code, signal })))

    const outputSoFar = Ref.get(output)
    const failWithOutput = (what: string) =>
      Effect.flatMap(outputSoFar, (text) => Effect.fail(new Error(`${what}; output:\n${text}`)))

    const waitForLog = (message: string, timeout: Duration.Input = "60 seconds") =>
      Effect.gen(function* () {
        for (;;) {
          const found = (yield* Ref.get(lines)).find((line) => line.message === message)
          if (found !== undefined) return found
          if (yield* Deferred.isDone(exit)) return yield* failWithOutput(`exited before logging "${message}"`)
          yield* Effect.sleep("20 millis")
        }
      }).pipe(
        Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.fail(new Error(`no "${message}" in time`)) }),
        Effect.catch((error) => failWithOutput(error.message)),
        Effect.orDie
      )

    yield* waitForLog(`Listening on http://127.0.0.1:${port}`, "120 seconds")
    return {
      pid,
      base: `http://127.0.0.1:${port}`,
      logs: Ref.get(lines),
      waitForLog,
      signal: (signal) => Effect.sync(() => void process.kill(pid, signal)),
      exited: Deferred.await(exit).pipe(
        Effect.timeoutOrElse({
          duration: "60 seconds",
          orElse: () => Effect.fail(new Error("the process did not exit within 60 s"))
        }),
        Effect.catch((error) => failWithOutput(error.message)),
        Effect.orDie
      ),
      output: outputSoFar
    } satisfies RunningService
  })
