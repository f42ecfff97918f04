import { NodeServices } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { runAdmin } from "../../src/app/admin/commands"

/**
 * Runs the admin command line in this process, as `admin <args>`, over the
 * services in context. Returns its exit, and what it printed with
 * `Console.log` (stdout) and `Console.error` (stderr: the command line's messages
 * for bad arguments), one entry a call, captured instead of written out.
 */
export const runCli = (...args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const stdout: Array<string> = []
    const stderr: Array<string> = []
    const base = yield* Console.Console
    const text = (parts: ReadonlyArray<unknown>) => parts.map(String).join(" ")
    const console: Console.Console = {
      ...base,
      log: (...parts) => void stdout.push(text(parts)),
      error: (...parts) => void stderr.push(text(parts))
    }
    const exit = yield* runAdmin(["node", "admin", ...args]).pipe(
      Effect.provide(NodeServices.layer),
      Effect.provideService(Console.Console, console),
      Effect.exit
    )
    return { exit, stdout, stderr }
  })
