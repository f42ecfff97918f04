import { Console, Data, Effect, Terminal } from "effect"
import { BadRequest } from "../../api/errors"
import type { Confirmation } from "./AdminInvocation"
import { AdminInvocation } from "./AdminInvocation"

/** What a destructive command asks, and what must be typed to go ahead: the name of what goes. */
export interface ConfirmationRequest {
  readonly question: string
  readonly expected: string
}

/**
 * The command runs in the embedded server for a command line that has not
 * confirmed it yet: nothing was done; the command line asks on its terminal
 * and sends the command again with what was typed.
 */
export class ConfirmationNeeded extends Data.TaggedError("ConfirmationNeeded")<ConfirmationRequest> {}

/** What becomes of a destructive command, before anything is done. */
export type Decision = "go" | "ask" | "refuse" | "ask-command-line"

/**
 * `--yes` goes ahead; so does a command line's confirmation that names what
 * goes. Otherwise: ask on the terminal, or have the command line ask, or,
 * with no terminal anywhere, refuse.
 */
export const decide = (confirmation: Confirmation, yes: boolean, expected: string): Decision => {
  if (yes) return "go"
  switch (confirmation._tag) {
    case "Terminal":
      return "ask"
    case "None":
      return "refuse"
    case "CommandLine":
      return confirmation.confirmed === expected ? "go" : "ask-command-line"
  }
}

export const refusedWithoutTerminal = (request: ConfirmationRequest) =>
  `refusing to go ahead unconfirmed: there is no terminal to type "${request.expected}" on; pass --yes to go ahead without asking`

/** Whether what was typed names what goes: exactly, blanks around it aside. */
export const confirms = (typed: string, expected: string) => typed.trim() === expected

/** Asks on the terminal (the question on standard error); fails unless the answer confirms. */
export const askOnTerminal = (request: ConfirmationRequest) =>
  Effect.gen(function* () {
    const terminal = yield* Terminal.Terminal
    yield* Console.error(`${request.question}\nType ${request.expected} to confirm:`)
    // End of input or Ctrl-C is a no.
    const typed = yield* Effect.orElseSucceed(terminal.readLine, () => "")
    if (!confirms(typed, request.expected))
      return yield* new BadRequest({ message: `not confirmed (typed "${typed.trim()}"): nothing was done` })
  })

/**
 * Goes ahead (succeeds) or fails saying why not: not confirmed, no terminal
 * to ask on, or (in the embedded server) `ConfirmationNeeded` for the
 * command line to ask. Call it before the command does anything.
 */
export const confirm = (request: ConfirmationRequest, yes: boolean) =>
  Effect.gen(function* () {
    const { confirmation } = yield* AdminInvocation
    switch (decide(confirmation, yes, request.expected)) {
      case "go":
        return
      case "ask":
        return yield* askOnTerminal(request)
      case "refuse":
        return yield* new BadRequest({ message: refusedWithoutTerminal(request) })
      case "ask-command-line":
        return yield* new ConfirmationNeeded(request)
    }
  })
