import type { HelpDoc } from "effect/cli"
import { Option } from "effect"
import { type Entry, outputWidth, twoColumns, wrap } from "./wrap"

/** How a section title is shown: bold on a terminal that shows colours, as it is elsewhere. */
export type Heading = (title: string) => string

export const plainHeading: Heading = (title) => title
export const boldHeading: Heading = (title) => `\x1b[1m${title}\x1b[0m`

const flagEntry = (flag: HelpDoc.FlagDoc): Entry => ({
  term: [`--${flag.name}`, ...flag.aliases].join(", ") + (flag.type === "boolean" ? "" : ` ${flag.type}`),
  description: Option.getOrElse(flag.description, () => "")
})

const section = (heading: Heading, title: string, lines: ReadonlyArray<string>): ReadonlyArray<string> =>
  lines.length === 0 ? [] : [heading(title), ...lines, ""]

/**
 * A command's help, within `outputWidth` columns (the layout of Effect's
 * own help, whose flag column grew as wide as the widest flag): description,
 * usage, arguments, flags, global flags, subcommands, then `commands`, the
 * listing of every command below this one with its flags (presenter.ts).
 */
export const helpText = (doc: HelpDoc.HelpDoc, commands: ReadonlyArray<Entry>, heading: Heading): string =>
  [
    ...section(
      heading,
      "DESCRIPTION",
      doc.description === "" ? [] : wrap(doc.description, outputWidth - 2).map((line) => `  ${line}`)
    ),
    ...section(heading, "USAGE", [`  ${doc.usage}`]),
    ...section(
      heading,
      "ARGUMENTS",
      twoColumns(
        (doc.args ?? []).map((arg) => ({
          term: `${arg.name}${arg.variadic ? "..." : ""} ${arg.type}`,
          description: Option.getOrElse(arg.description, () => "") + (arg.required ? "" : " (optional)")
        })),
        24
      )
    ),
    ...section(heading, "FLAGS", twoColumns(doc.flags.map(flagEntry), 28)),
    ...section(heading, "GLOBAL FLAGS", twoColumns((doc.globalFlags ?? []).map(flagEntry), 28)),
    ...section(
      heading,
      "SUBCOMMANDS",
      twoColumns(
        (doc.subcommands ?? []).flatMap((group) =>
          group.commands.map((sub) => ({ term: sub.name, description: sub.shortDescription ?? sub.description }))
        ),
        20
      )
    ),
    ...section(heading, "COMMANDS", twoColumns(commands, 28))
  ]
    .join("\n")
    .trimEnd()
