import { Console, Context, Effect, Option, Predicate } from "effect"
import { type CliError, CliOutput, Command, Param, type Primitive, TerminalCapabilities } from "effect/cli"
import { boldHeading, helpText, plainHeading } from "./helpText"
import type { Entry } from "./wrap"

/**
 * A command's usage as the command line has always listed it in its help:
 * flags, then arguments (`[--name text] <slug>`). Set on every runnable
 * command (see `command` in commands.ts); read by `presenterFor`.
 */
export const Usage = Context.Reference<string>("admin/Usage", { defaultValue: () => "" })

/** A choice's cases: the primitive carries them (`choiceKeys`), though its interface does not say so. */
const choicesOf = (primitive: Primitive.Primitive<unknown>): ReadonlyArray<unknown> | undefined =>
  Predicate.hasProperty(primitive, "choiceKeys") && Array.isArray(primitive.choiceKeys)
    ? primitive.choiceKeys
    : undefined

const typeOf = (primitive: Primitive.Primitive<unknown>): string => {
  switch (primitive._tag) {
    case "String":
      return "text"
    case "Redacted":
      return "redacted"
    case "Choice":
      return choicesOf(primitive)?.map(String).join(" | ") ?? "choice"
    default:
      return primitive._tag.toLowerCase()
  }
}

/** The single parameters a parameter is made of (a flag made optional or mapped is still its flag). */
const singlesOf = (
  param: Param.Param<Param.ParamKind, unknown>
): ReadonlyArray<Param.Single<Param.ParamKind, unknown>> =>
  Param.isSingle(param)
    ? [param]
    : Predicate.hasProperty(param, "param") && Param.isParam(param.param)
      ? singlesOf(param.param)
      : []

/** A boolean flag takes no value and is false when left out: `[--yes]`. */
const isSwitch = (single: Param.Single<Param.ParamKind, unknown>) =>
  single.kind === "flag" && single.primitiveType._tag === "Boolean"

const paramUsage = (param: Param.Param<Param.ParamKind, unknown>): string => {
  const singles = singlesOf(param).filter((single) => !single.hidden)
  const text = singles
    .map((single) =>
      single.kind === "argument"
        ? `<${single.name}>`
        : isSwitch(single)
          ? `--${single.name}`
          : `--${single.name} ${typeOf(single.primitiveType)}`
    )
    .join(" ")
  if (text === "") return text
  if (param._tag === "Variadic") return `${repeatedAtLeastOnce(param) ? text : `[${text}]`}...`
  return param._tag === "Optional" || singles.every(isSwitch) ? `[${text}]` : text
}

/** Whether a repeated parameter (`Flag.atLeast(n)`) must be given at least once. */
const repeatedAtLeastOnce = (param: Param.Param<Param.ParamKind, unknown>): boolean =>
  Predicate.hasProperty(param, "min") &&
  Option.isOption(param.min) &&
  Option.isSome(param.min) &&
  typeof param.min.value === "number" &&
  param.min.value > 0

/** The usage of a command's parameters (its `Command.make` config). */
export const usageOf = (config: Readonly<Record<string, Param.Param<Param.ParamKind, unknown>>>): string => {
  const params = Object.values(config)
  return [...params.filter((param) => param.kind === "flag"), ...params.filter((param) => param.kind === "argument")]
    .map(paramUsage)
    .filter((usage) => usage !== "")
    .join(" ")
}

/** A runnable command, its usage (flags, then arguments) kept for the help's listing (see presenter.ts). */
export const command = <const Name extends string, const Config extends Command.Command.Config, E, R>(
  name: Name,
  config: Config & Readonly<Record<string, Param.Param<Param.ParamKind, unknown>>>,
  handler: (input: Command.Command.Config.Infer<Config>) => Effect.Effect<void, E, R>
) => Command.make(name, config, handler).pipe(Command.annotate(Usage, usageOf(config)))

/** Every command below `command`, named from it (`member set-role --workspace text ...`), with its description. */
const listing = (command: Command.Command.Any, prefix: ReadonlyArray<string>): Array<Entry> =>
  command.subcommands
    .flatMap((group) => group.commands)
    .flatMap((child) => {
      const path = [...prefix, child.name]
      const usage = Context.get(child.annotations, Usage)
      return [
        { term: [...path, ...(usage === "" ? [] : [usage])].join(" "), description: child.description ?? "" },
        ...listing(child, path)
      ]
    })

const commandAt = (root: Command.Command.Any, path: ReadonlyArray<string>): Command.Command.Any | undefined =>
  path
    .slice(1)
    .reduce<Command.Command.Any | undefined>(
      (command, name) => command?.subcommands.flatMap((group) => group.commands).find((child) => child.name === name),
      root
    )

/** `"read" | "update"`, as Effect's CLI describes a choice, back to its cases. */
const casesOf = (expected: string): ReadonlyArray<string> | undefined => {
  const cases = expected.split(" | ").map((part) => /^"([^"]*)"$/.exec(part)?.[1])
  return cases.every((name) => name !== undefined) ? cases.filter((name) => name !== undefined) : undefined
}

/** A bad invocation in the command line's own words (Effect 3's @effect/cli wording, which scripts may match). */
const messageOf = (error: CliError.CliError, formatter: CliOutput.Formatter): string => {
  switch (error._tag) {
    case "MissingOption":
      return `Expected to find option: '--${error.option}'`
    case "UserError":
      return error.message
    case "InvalidValue": {
      const cases = casesOf(error.expected)
      return cases === undefined
        ? formatter.formatError(error).trim()
        : `Expected one of the following cases: ${cases.join(", ")}`
    }
    default:
      return formatter.formatError(error).trim()
  }
}

/**
 * How the admin command line presents help, its version and bad invocations,
 * as it did before Effect 4: the help ends with every command below the one
 * asked about, each with its flags and arguments; `--version` prints the
 * version alone; a bad invocation prints only what is wrong, on standard
 * error, without the help on standard output. The help fits in 100 columns
 * and is plain text unless it goes to a terminal that shows colours
 * (`NO_COLOR` set: none).
 */
export const presenterFor = (root: Command.Command.Any): CliOutput.Presenter => ({
  present: (event) => {
    switch (event._tag) {
      case "InvalidInvocation":
        return CliOutput.Formatter.use((formatter) =>
          Console.error(event.errors.map((error) => messageOf(error, formatter)).join("\n"))
        )
      case "Version":
        return Console.log(event.version)
      case "Help":
        return Effect.gen(function* () {
          const { canColor } = yield* TerminalCapabilities.TerminalCapabilities
          const command = commandAt(root, event.commandPath)
          const commands = command === undefined ? [] : listing(command, [])
          yield* Console.log(helpText(event.helpDoc, commands, canColor ? boldHeading : plainHeading))
        })
    }
  }
})
