import { Effect } from "effect"
import { spawn } from "node:child_process"

export interface ProcessResult {
  /** The exit code; null when the process was ended by a signal. */
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

/**
 * Runs a command to its end in the project's directory, with `env` added to
 * this process's environment (an `undefined` value removes a variable) and
 * `input` as its standard input (none: an empty one). The process and
 * its children are killed if the effect is interrupted (a timeout).
 */
export const runProcess = (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined> = {},
  cwd: string = process.cwd(),
  input?: string
) =>
  Effect.callback<ProcessResult, Error>((resume) => {
    const merged: Record<string, string> = {}
    for (const [name, value] of Object.entries({ ...process.env, ...env }))
      if (value !== undefined) merged[name] = value
    // Its own process group, so that a kill reaches what it started (npx starts tsx starts node).
    const child = spawn(command, args, {
      cwd,
      env: merged,
      stdio: "pipe",
      detached: true
    })
    child.stdin.on("error", () => {})
    child.stdin.end(input)
    let stdout = ""
    let stderr = ""
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk))
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk))
    child.on("error", (error) => resume(Effect.fail(error)))
    child.on("close", (code) => resume(Effect.succeed({ code, stdout, stderr })))
    return Effect.sync(() => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
      } catch {
        // already gone
      }
    })
  })

/** The lines of a stream's text, without empty lines and npm's own `npm warn` notices. */
export const meaningfulLines = (text: string): ReadonlyArray<string> =>
  text.split("\n").filter((line) => line.trim().length > 0 && !line.startsWith("npm warn"))

/** A process the test talks to while it runs (see `startProcess`). */
export interface TalkingProcess {
  readonly pid: number
  /** Writes `text` to its standard input; `end` closes it after. */
  readonly write: (text: string, end?: boolean) => Effect.Effect<void>
  /** stdout and stderr so far, in the order they came. */
  readonly output: Effect.Effect<string>
  /** Waits for it to exit: its result. */
  readonly exited: Effect.Effect<ProcessResult>
}

/**
 * Starts a command in the project's directory, in a process group of its own,
 * with `env` added to this process's environment (an `undefined` value
 * removes a variable) and its standard input open for `write`. Whatever of
 * its group still runs when the scope closes is killed.
 */
export const startProcess = (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined> = {}
) =>
  Effect.gen(function* () {
    const merged: Record<string, string> = {}
    for (const [name, value] of Object.entries({ ...process.env, ...env }))
      if (value !== undefined) merged[name] = value
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(command, args, { cwd: process.cwd(), env: merged, stdio: "pipe", detached: true })),
      (child) =>
        Effect.sync(() => {
          try {
            if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL")
          } catch {
            // already gone
          }
        })
    )
    const pid = child.pid
    if (pid === undefined) return yield* Effect.fail(new Error(`${command} did not start`))
    let stdout = ""
    let stderr = ""
    let output = ""
    child.stdin.on("error", () => {})
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk
      output += chunk
    })
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk
      output += chunk
    })
    const closed = new Promise<number | null>((resolve) => child.on("close", resolve))
    const talking: TalkingProcess = {
      pid,
      write: (text, end = false) =>
        Effect.sync(() => {
          if (end) child.stdin.end(text)
          else child.stdin.write(text)
        }),
      output: Effect.sync(() => output),
      exited: Effect.promise(() => closed).pipe(Effect.map((code) => ({ code, stdout, stderr })))
    }
    return talking
  })
