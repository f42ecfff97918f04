import { CliError, type Command, Flag } from "effect/cli"
import { Context, Effect, Option, type Redacted } from "effect"
import { BadRequest } from "../../api/errors"

/**
 * A secret a command needs (`user create`'s password) is never one of its
 * arguments, which any user of the machine can read in the process list and
 * the shell keeps in its history. The command names it with this annotation
 * (`Command.annotate(AsksSecret, "password")`); the command line reads it
 * from its terminal or standard input before the command runs (here or in
 * the embedded server, which gets it inside the request) and the command
 * takes it from `CommandSecret`.
 */
export const AsksSecret = Context.Reference<string | undefined>("admin/AsksSecret", {
  defaultValue: () => undefined
})

/** The secret given with this command run; none when the command asks for none. */
export class CommandSecret extends Context.Service<CommandSecret, Option.Option<Redacted.Redacted<string>>>()(
  "admin/CommandSecret"
) {}

/** The secret a command asked for, `what` naming it in the failure when none came with the run. */
export const requiredSecret = (what: string) =>
  Effect.flatMap(
    CommandSecret,
    Option.match({
      onNone: () =>
        Effect.fail(new BadRequest({ message: `no ${what} given: type it when asked, or pipe it on standard input` })),
      onSome: Effect.succeed
    })
  )

/**
 * The flag that carried the password before it was read from the terminal or
 * standard input. Still parsed, so that its value is never taken for an
 * argument and printed back in an error; hidden from the help; refused,
 * saying how to give the password instead.
 */
export const formerPasswordFlag = Flag.String("password").pipe(
  Flag.optional,
  Flag.withHidden,
  Flag.mapEffect(
    Option.match({
      onNone: () => Effect.void,
      onSome: () => {
        const message =
          "--password is no longer accepted (arguments show in the process list and the shell history): " +
          "type the password when asked, or pipe it as the first line of standard input " +
          "(printf '%s\\n' \"$PASSWORD\" | admin user create --email ... --name ...)"
        return Effect.fail(new CliError.UserError({ cause: message, userMessage: message }))
      }
    })
  )
)

const childNamed = (command: Command.Command.Any, name: string) =>
  command.subcommands.flatMap((group) => group.commands).find((child) => child.name === name)

/**
 * The command that `args` (as typed after `admin`, already parsed by
 * effect/cli) run: the tree walked down by the words that name a subcommand,
 * in order; options and their values name none.
 */
export const commandRunBy = (root: Command.Command.Any, args: ReadonlyArray<string>): Command.Command.Any =>
  args.reduce((command, arg) => childNamed(command, arg) ?? command, root)

/** What secret the command `args` run asks for, if any. */
export const secretAskedBy = (root: Command.Command.Any, args: ReadonlyArray<string>): string | undefined =>
  Context.get(commandRunBy(root, args).annotations, AsksSecret)
