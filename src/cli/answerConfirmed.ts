import { Effect, Option } from "effect"
import type { Redacted } from "effect"
import type { AdminAnswer } from "../api/AdminSocket"
import { confirm } from "../app/admin/confirmation"
import { askServer } from "./askServer"

/**
 * The embedded server's answer to `args`, confirmed on this side when the
 * server asks for it (a destructive command): the question is asked on this
 * process's terminal (none: refused, as without a server), then the command
 * goes to the server again with what was typed, and with the `secret` it was
 * first sent with, if any. The server has no terminal; the person at this
 * one decides.
 */
export const answerConfirmed = (
  path: string,
  args: ReadonlyArray<string>,
  answer: AdminAnswer,
  secret: Option.Option<Redacted.Redacted<string>> = Option.none()
) =>
  answer._tag === "NeedsConfirmation"
    ? Effect.andThen(confirm(answer, false), askServer(path, args, { secret, confirmed: answer.expected }))
    : Effect.succeed(Option.some(answer))
