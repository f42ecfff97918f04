import { CliOutput, type Command, TerminalCapabilities } from "effect/cli"
import { Cause, Console, Effect, Exit, Option, Redacted } from "effect"
import { AdminNeedsConfirmation, AdminRan } from "../../api/AdminSocket"
import type { AdminOutput } from "../../api/AdminSocket"
import { AdminInvocation } from "./AdminInvocation"
import { CommandSecret } from "./CommandSecret"
import { ConfirmationNeeded } from "./confirmation"
import { runAdmin } from "./commands"
import { reportFailure } from "./reportFailure"

const plainText = { canColor: false, canAnimate: false, canPrompt: false }

type AdminRequirements = Exclude<Effect.Services<ReturnType<typeof runAdmin>>, CommandSecret>

/** The confirmation a destructive command stopped for, if that is why it stopped. */
const confirmationNeeded = (cause: Cause.Cause<unknown>) =>
  Option.filter(
    Cause.findErrorOption(cause),
    (error): error is ConfirmationNeeded => error instanceof ConfirmationNeeded
  )

/** What the command line read on its side and sent with the command (`AdminRequest`'s fields of the same names). */
export interface GivenByCommandLine {
  /** What the command asks for (`user create`'s password), read from the command line's terminal or standard input. */
  readonly secret?: string | undefined
  /** What was typed on the command line's terminal to confirm a destructive command. */
  readonly confirmed?: string | undefined
}

/**
 * Runs the admin command line on `args` (as typed after `admin`) over the
 * services in context, as the command line itself would, but with what it
 * prints captured instead of written to this process's stdout and stderr:
 * its output in order and its exit code (0 on success, 1 on any failure,
 * whose one-line message is part of the output, as on a terminal), in plain
 * text whatever this process's own output is (the command line's may be
 * anything). `given.secret` is what the command asks for (`user create`'s
 * password), which the command line read from its terminal or standard
 * input. A destructive command not yet confirmed by the command line
 * (`given.confirmed`) does nothing and answers what the command line must
 * ask instead.
 */
export const runCaptured = (
  args: ReadonlyArray<string>,
  cwd: string = process.cwd(),
  given: GivenByCommandLine = {}
): Effect.Effect<AdminRan | AdminNeedsConfirmation, never, AdminRequirements | Command.Environment> =>
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
      Effect.tapCause((cause) => (Option.isSome(confirmationNeeded(cause)) ? Effect.void : reportFailure(cause))),
      Effect.provideService(Console.Console, console),
      Effect.provideService(AdminInvocation, {
        cwd,
        progress: false,
        confirmation: { _tag: "CommandLine", confirmed: given.confirmed }
      }),
      Effect.provideService(CommandSecret, Option.map(Option.fromUndefinedOr(given.secret), Redacted.make)),
      Effect.provideService(TerminalCapabilities.TerminalCapabilities, plainText),
      Effect.provideService(CliOutput.Formatter, CliOutput.defaultFormatter({ colors: false })),
      Effect.exit
    )
    const needed = Exit.isFailure(exit) ? confirmationNeeded(exit.cause) : Option.none()
    if (Option.isSome(needed))
      return AdminNeedsConfirmation.make({ question: needed.value.question, expected: needed.value.expected })
    return AdminRan.make({ output, exitCode: Exit.isSuccess(exit) ? 0 : 1 })
  })
