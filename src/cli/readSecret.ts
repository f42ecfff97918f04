import { Prompt } from "effect/cli"
import { Data, Effect, Redacted, Stdio, Terminal } from "effect"

export class SecretNotGiven extends Data.TaggedError("SecretNotGiven")<{ readonly message: string }> {}

/** The terminal, its prompts drawn on standard error: standard output keeps only what the command prints. */
const promptingOnStandardError = (terminal: Terminal.Terminal) =>
  Terminal.make({
    ...terminal,
    display: (text) =>
      Effect.sync(() => {
        process.stderr.write(text)
      })
  })

/**
 * Reads the secret a command asks for (`what`: "password"): typed at a
 * prompt that does not echo it when standard input is a terminal, otherwise
 * the first line of standard input (piped, or a file). Never from an
 * argument.
 */
export const readSecret = (what: string) =>
  Effect.gen(function* () {
    const terminal = yield* Terminal.Terminal
    if (yield* (yield* Stdio.Stdio).stdinIsTerminal) {
      return yield* Prompt.run(Prompt.Hidden({ message: `${what} (not shown as you type)` })).pipe(
        Effect.provideService(Terminal.Terminal, promptingOnStandardError(terminal)),
        Effect.mapError(() => new SecretNotGiven({ message: `no ${what} typed` }))
      )
    }
    return yield* terminal.readLine.pipe(
      Effect.map((line) => Redacted.make(line)),
      Effect.mapError(
        () =>
          new SecretNotGiven({
            message: `no ${what} on standard input: pipe it as the first line (printf '%s\\n' "$SECRET" | ...), or run the command on a terminal to type it`
          })
      )
    )
  })
