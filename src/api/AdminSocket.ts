import { Schema } from "effect"
import { omittable } from "./Json"

/**
 * The embedded server's admin socket speaks one JSON line each way per
 * connection: the command line sends an `AdminRequest`, the server answers
 * with an `AdminAnswer` and closes the connection.
 */

/** The largest request line the server reads, in bytes; a longer one is refused. */
export const maxAdminRequestBytes = 64 * 1024

/** A command to run: its arguments as typed after `admin` (`["workspace", "list"]`). */
export const AdminRequest = Schema.Struct({
  args: Schema.Array(Schema.String),
  /** The command line's working directory: a relative file name in the command is resolved against it. */
  cwd: omittable(Schema.String),
  /**
   * What the command asks for that is never one of its arguments (`user
   * create`'s password), read by the command line from its terminal or
   * standard input.
   */
  secret: omittable(Schema.String),
  /** What was typed on the command line's terminal to confirm a destructive command (see `AdminNeedsConfirmation`). */
  confirmed: omittable(Schema.String)
})
export type AdminRequest = typeof AdminRequest.Type

/** What one print of the command wrote (a table is one print of several lines), and to which stream. */
export const AdminOutput = Schema.Struct({
  stream: Schema.Literals(["stdout", "stderr"]),
  text: Schema.String
})
export type AdminOutput = typeof AdminOutput.Type

/** The command ran: what it printed, in order, and the exit code the command line exits with (0: success). */
export const AdminRan = Schema.TaggedStruct("Ran", {
  output: Schema.Array(AdminOutput),
  exitCode: Schema.Int
})
export type AdminRan = typeof AdminRan.Type

/** The server ran nothing: the request was malformed or too large, or the server is shutting down. */
export const AdminRefused = Schema.TaggedStruct("Refused", {
  message: Schema.String
})
export type AdminRefused = typeof AdminRefused.Type

/**
 * The command destroys data and was sent unconfirmed: nothing ran. The
 * command line asks `question` on its terminal and, if `expected` is typed,
 * sends the command again with it as `confirmed`; with no terminal it refuses.
 */
export const AdminNeedsConfirmation = Schema.TaggedStruct("NeedsConfirmation", {
  question: Schema.String,
  expected: Schema.String
})
export type AdminNeedsConfirmation = typeof AdminNeedsConfirmation.Type

/** The server's one answer line. */
export const AdminAnswer = Schema.Union([AdminRan, AdminRefused, AdminNeedsConfirmation])
export type AdminAnswer = typeof AdminAnswer.Type
