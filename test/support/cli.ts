import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"
import type { Console } from "effect"
import { runAdmin } from "../../src/app/admin/commands"

/**
 * Runs the admin command line in this process, as `admin <args>`, over the
 * services in context. Returns its exit, and what it printed with
 * `Console.log` (stdout) and `Console.error` (stderr: @effect/cli's messages
 * for bad arguments), one entry a call, captured instead of written out.
 */
export const runCli = (...args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const stdout: Array<string> = []
    const stderr: Array<string> = []
    const base = yield* Effect.console
    const text = (parts: ReadonlyArray<unknown>) => parts.map(String).join(" ")
    const console: Console.Console = {
      ...base,
      log: (...parts) => Effect.sync(() => void stdout.push(text(parts))),
      error: (...parts) => Effect.sync(() => void stderr.push(text(parts))),
      unsafe: {
        ...base.unsafe,
        log: (...parts) => void stdout.push(text(parts)),
        error: (...parts) => void stderr.push(text(parts))
      }
    }
    const exit = yield* runAdmin(["node", "admin", ...args]).pipe(
      Effect.provide(NodeContext.layer),
      Effect.withConsole(console),
      Effect.exit
    )
    return { exit, stdout, stderr }
  })
