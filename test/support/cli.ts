import { NodeServices } from "@effect/platform-node"
import { Console, Effect, Option, Redacted } from "effect"
import { CommandSecret } from "../../src/app/admin/CommandSecret"
import { runAdmin } from "../../src/app/admin/commands"

/**
 * Runs the admin command line in this process, as `admin <args>`, over the
 * services in context, with `secret` as what the command line read from its
 * terminal or standard input (`user create`'s password). Returns its exit, and
 * what it printed with `Console.log` (stdout) and `Console.error` (stderr: the
 * command line's messages for bad arguments), one entry a call, captured
 * instead of written out.
 */
export const runCliWithSecret = (secret: Option.Option<string>, ...args: ReadonlyArray<string>) =>
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
      Effect.provideService(CommandSecret, Option.map(secret, Redacted.make)),
      Effect.exit
    )
    return { exit, stdout, stderr }
  })

/** `runCliWithSecret` for a command that asks for no secret. */
export const runCli = (...args: ReadonlyArray<string>) => runCliWithSecret(Option.none(), ...args)

/** `admin user create` with `password`, as if typed or piped. */
export const runUserCreate = (password: string, ...args: ReadonlyArray<string>) =>
  runCliWithSecret(Option.some(password), "user", "create", ...args)
