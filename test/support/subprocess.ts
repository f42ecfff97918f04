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
 * this process's environment (an `undefined` value removes a variable). The
 * process and its children are killed if the effect is interrupted (a timeout).
 */
export const runProcess = (
  command: string,
  args: ReadonlyArray<string>,
  env: Record<string, string | undefined> = {},
  cwd: string = process.cwd()
) =>
  Effect.callback<ProcessResult, Error>((resume) => {
    const merged: Record<string, string> = {}
    for (const [name, value] of Object.entries({ ...process.env, ...env }))
      if (value !== undefined) merged[name] = value
    // Its own process group, so that a kill reaches what it started (npx starts tsx starts node).
    const child = spawn(command, args, {
      cwd,
      env: merged,
      stdio: ["ignore", "pipe", "pipe"],
      detached: true
    })
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
