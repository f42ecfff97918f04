import { CliOutput, type Command, TerminalCapabilities } from "effect/cli"
import { Console, Effect, Exit, Option, Redacted } from "effect"
import { AdminRan } from "../../api/AdminSocket"
import type { AdminOutput } from "../../api/AdminSocket"
import { AdminInvocation } from "./AdminInvocation"
import { CommandSecret } from "./CommandSecret"
import { runAdmin } from "./commands"
import { reportFailure } from "./reportFailure"

const plainText = { canColor: false, canAnimate: false, canPrompt: false }

type AdminRequirements = Exclude<Effect.Services<ReturnType<typeof runAdmin>>, CommandSecret>

/**
 * Runs the admin command line on `args` (as typed after `admin`) over the
 * services in context, as the command line itself would, but with what it
 * prints captured instead of written to this process's stdout and stderr:
 * its output in order and its exit code (0 on success, 1 on any failure,
 * whose one-line message is part of the output, as on a terminal), in plain
 * text whatever this process's own output is (the command line's may be
 * anything). `secret` is what the command asks for (`user create`'s
 * password), which the command line read from its terminal or standard input.
 */
export const runCaptured = (
  args: ReadonlyArray<string>,
  cwd: string = process.cwd(),
  secret?: string
): Effect.Effect<AdminRan, never, AdminRequirements | Command.Environment> =>
  Effect.gen(function* () {
    const output: Array<AdminOutput> = []
    const base = yield* Console.Console
    const to =
      (stream: AdminOutput["stream"]) =>
      (...parts: ReadonlyArray<unknown>) =>
        void output.push({ stream, text: parts.map(String).join(" ") })
    const console: Console.Console = {
      ...base,
      log: to("stdout"),
      info: to("stdout"),
      error: to("stderr"),
      warn: to("stderr")
    }
    const exit = yield* runAdmin(["node", "admin", ...args]).pipe(
      Effect.tapCause(reportFailure),
      Effect.provideService(Console.Console, console),
      Effect.provideService(AdminInvocation, { cwd, progress: false }),
      Effect.provideService(CommandSecret, Option.map(Option.fromUndefinedOr(secret), Redacted.make)),
      Effect.provideService(TerminalCapabilities.TerminalCapabilities, plainText),
      Effect.provideService(CliOutput.Formatter, CliOutput.defaultFormatter({ colors: false })),
      Effect.exit
    )
    return AdminRan.make({ output, exitCode: Exit.isSuccess(exit) ? 0 : 1 })
  })
