/** The width the command line's help and tables keep within, whatever the terminal's. */
export const outputWidth = 100

/** Where prose breaks: after a space or a comma. */
const afterSpaceOrComma = /(?<=[ ,])(?=[^ ,])/

/** Where a command's usage breaks: before a flag, an optional part or an argument, not inside one. */
const beforeParameter = /(?<= )(?=[-[<])/

/**
 * `text` as lines of at most `width` characters, broken where `breaks`
 * matches; a part longer than `width` is cut. No line ends in a space.
 */
export const wrap = (text: string, width: number, breaks: RegExp = afterSpaceOrComma): ReadonlyArray<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(breaks)) {
    if ((line + word).trimEnd().length <= width) {
      line += word
      continue
    }
    if (line.trimEnd() !== "") lines.push(line.trimEnd())
    line = word
    while (line.trimEnd().length > width) {
      lines.push(line.slice(0, width))
      line = line.slice(width)
    }
  }
  if (line.trimEnd() !== "" || lines.length === 0) lines.push(line.trimEnd())
  return lines
}

export interface Entry {
  readonly term: string
  readonly description: string
}

/**
 * Terms and their descriptions in two columns within `outputWidth`, indented
 * by two: the descriptions start two spaces after the widest term up to
 * `maxTerm` characters, wrapped in the room left; a longer term has its
 * description on the lines below it.
 */
export const twoColumns = (entries: ReadonlyArray<Entry>, maxTerm: number): ReadonlyArray<string> => {
  const termWidth = Math.min(maxTerm, Math.max(0, ...entries.map((entry) => entry.term.length)))
  const column = 2 + termWidth + 2
  const room = outputWidth - column
  return entries.flatMap(({ description, term }) => {
    const terms = wrap(term, outputWidth - 6, beforeParameter).map((line, i) => `${i === 0 ? "  " : "      "}${line}`)
    const described = description === "" ? [] : wrap(description, room).map((line) => " ".repeat(column) + line)
    const [first, ...rest] = described
    if (first === undefined) return terms
    if (terms.length > 1 || term.length > termWidth) return [...terms, ...described]
    return [`  ${term.padEnd(termWidth)}  ${first.trimStart()}`, ...rest]
  })
}
