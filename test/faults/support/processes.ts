import { Deferred, Duration, Effect } from "effect"
import type { Scope } from "effect"
import { spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { createWriteStream, readdirSync, readFileSync } from "node:fs"

export interface CommandResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/** Runs a short command to its end, within `timeout`; its process group is killed when the bound is hit. */
export const run = (
  command: string,
  args: ReadonlyArray<string>,
  timeout: Duration.Input = "30 seconds",
  stdin?: string
) =>
  Effect.callback<CommandResult, Error>((resume) => {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], detached: true })
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", (error) => resume(Effect.fail(error)))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    child.stdin.end(stdin ?? "")
    return Effect.sync(() => killGroup(child, "SIGKILL"))
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail(
          new Error(
            `${command} ${args.join(" ")} did not finish within ${Duration.format(Duration.fromInputUnsafe(timeout))}`
          )
        )
    })
  )

/** Like `run`, but a non-zero exit is a failure naming the command and its stderr. */
export const runOk = (command: string, args: ReadonlyArray<string>, timeout?: Duration.Input, stdin?: string) =>
  Effect.flatMap(run(command, args, timeout, stdin), (result) =>
    result.code === 0
      ? Effect.succeed(result)
      : Effect.fail(
          new Error(`${command} ${args.join(" ")} exited with ${String(result.code)}: ${result.stderr.slice(0, 2000)}`)
        )
  )

const killGroup = (child: ChildProcess, signal: NodeJS.Signals) => {
  try {
    if (child.pid !== undefined && child.exitCode === null && child.signalCode === null)
      process.kill(-child.pid, signal)
  } catch {
    // already gone
  }
}

/** Sends `signal` to one process by its pid; false when it is gone. */
export const signalPid = (pid: number, signal: NodeJS.Signals | 0): boolean => {
  try {
    process.kill(pid, signal)
    return true
  } catch {
    return false
  }
}

export const isAlive = (pid: number): boolean => signalPid(pid, 0)

/** The pids whose parent is `pid` (read from /proc). */
export const childrenOf = (pid: number): ReadonlyArray<number> => {
  const children: Array<number> = []
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      // Fields after the command name, which is in parentheses and may hold spaces.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
      if (Number(fields[1]) === pid) children.push(Number(entry))
    } catch {
      // the process ended meanwhile
    }
  }
  return children
}

/**
 * Last resort when the test process ends without its finalizers (killed,
 * or exiting mid-test): the process groups this process started and has
 * not seen end, and the cleanups registered with `onProcessExit`, run
 * synchronously on exit.
 */
const startedGroups = new Set<number>()
const exitCleanups = new Set<() => void>()
const cleanUpNow = () => {
  for (const cleanup of exitCleanups) cleanup()
  exitCleanups.clear()
  for (const pid of startedGroups) signalPid(-pid, "SIGKILL")
  startedGroups.clear()
}
process.once("exit", cleanUpNow)
// A test run cut short (Ctrl-C, the worker terminated) ends with a signal, which skips "exit".
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    cleanUpNow()
    process.exit(signal === "SIGINT" ? 130 : 143)
  })
}

/** Registers `cleanup` to run if the process exits first; returns the unregistration. */
export const onProcessExit = (cleanup: () => void) => {
  exitCleanups.add(cleanup)
  return () => void exitCleanups.delete(cleanup)
}

/** A long-running child process started by a test, in its own process group. */
export interface Spawned {
  readonly pid: number
  /** Completes with the exit code (null when ended by a signal) and the signal. */
  readonly exited: Deferred.Deferred<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly signal: (signal: NodeJS.Signals) => Effect.Effect<void>
  /** Waits for the exit up to `timeout`; None when it is still running then. */
  readonly awaitExit: (
    timeout: Duration.Input
  ) => Effect.Effect<{ readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined>
}

/**
 * Starts `command` with its output appended to `logFile`. When the scope
 * closes, the process group is killed (SIGKILL) if still running, and its
 * exit awaited (bounded).
 */
export const spawnLong = (
  command: string,
  args: ReadonlyArray<string>,
  options: { readonly env?: Record<string, string>; readonly logFile: string; readonly cwd?: string }
): Effect.Effect<Spawned, Error, Scope.Scope> =>
  Effect.gen(function* () {
    const exited = yield* Deferred.make<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>()
    const child = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const log = createWriteStream(options.logFile, { flags: "a" })
          const child = spawn(command, args, {
            cwd: options.cwd ?? process.cwd(),
            env: options.env ?? process.env,
            stdio: ["ignore", "pipe", "pipe"],
            detached: true
          })
          child.stdout?.pipe(log, { end: false })
          child.stderr?.pipe(log, { end: false })
          if (child.pid !== undefined) startedGroups.add(child.pid)
          child.on("exit", (code, signal) => {
            if (child.pid !== undefined) startedGroups.delete(child.pid)
            Effect.runSync(Deferred.succeed(exited, { code, signal }))
          })
          child.on("close", () => log.end())
          child.on("error", () => Effect.runSync(Deferred.succeed(exited, { code: -1, signal: null })))
          if (child.pid === undefined) throw new Error(`${command} did not start`)
          return child
        },
        catch: (error) => new Error(`cannot start ${command}: ${String(error)}`)
      }),
      (child) =>
        Effect.sync(() => killGroup(child, "SIGKILL")).pipe(
          Effect.andThen(Deferred.await(exited).pipe(Effect.timeout("10 seconds"), Effect.ignore))
        )
    )
    const pid = child.pid ?? 0
    return {
      pid,
      exited,
      signal: (signal) => Effect.sync(() => void signalPid(pid, signal)),
      awaitExit: (timeout) =>
        Deferred.await(exited).pipe(
          Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.succeed(undefined) })
        )
    }
  })

/** Polls `check` every `interval` until it yields true, failing with `what` after `timeout`. */
export const waitUntil = <E, R>(
  what: string,
  check: Effect.Effect<boolean, E, R>,
  timeout: Duration.Input,
  interval: Duration.Input = "100 millis"
): Effect.Effect<void, Error, R> =>
  Effect.gen(function* () {
    for (;;) {
      const ok = yield* check.pipe(Effect.orElseSucceed(() => false))
      if (ok) return
      yield* Effect.sleep(interval)
    }
  }).pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () =>
        Effect.fail(new Error(`${what}: not reached within ${Duration.format(Duration.fromInputUnsafe(timeout))}`))
    })
  )
