import { outputWidth, wrap } from "./wrap"

/** A narrowed column keeps at least this many characters (or its title's), even if that breaks a word. */
const narrowest = 10

/**
 * Narrows the widest of `widths` (as each column is) above its floor by one
 * character at a time until the columns fit in `room`, or none can give more.
 */
const narrow = (widths: Array<number>, floors: ReadonlyArray<number>, room: number) => {
  const total = () => widths.reduce((sum, width) => sum + width, 0)
  while (total() > room) {
    let widest: number | undefined
    for (const [column, width] of widths.entries())
      if (width > (floors[column] ?? width) && (widest === undefined || width > (widths[widest] ?? 0))) widest = column
    if (widest === undefined) return
    widths[widest] = (widths[widest] ?? 0) - 1
  }
}

const longestWord = (cells: ReadonlyArray<string>) =>
  Math.max(0, ...cells.flatMap((cell) => cell.split(/[ ,]/).map((word) => word.length + 1)))

/**
 * The columns' widths within `outputWidth`: as wide as their widest cell if
 * that fits; else the widest columns narrowed, first no narrower than their
 * longest word (so that cells break between words), then, if that is not
 * enough, down to `narrowest`. The `unbroken` columns keep their width.
 */
const columnWidths = (columns: ReadonlyArray<ReadonlyArray<string>>, unbroken: ReadonlyArray<boolean>) => {
  const widths = columns.map((cells) => Math.max(...cells.map((cell) => cell.length)))
  const room = outputWidth - 2 * (widths.length - 1)
  const title = (column: number) => columns[column]?.[0]?.length ?? 0
  const keep = (floor: (column: number) => number) =>
    widths.map((width, column) => (unbroken[column] ? width : Math.min(width, Math.max(title(column), floor(column)))))
  narrow(
    widths,
    keep((column) => longestWord(columns[column] ?? [])),
    room
  )
  narrow(
    widths,
    keep(() => narrowest),
    room
  )
  return widths
}

/**
 * Rows as aligned text columns under a header, for a terminal: every column
 * as wide as its widest cell, two spaces between columns, no trailing space.
 * A table wider than `outputWidth` columns narrows its widest columns, whose
 * cells then go on over the lines below, within their column; the columns
 * titled in `unbroken` (ids, copied whole into the next command) never are.
 */
export const table = (
  header: ReadonlyArray<string>,
  rows: ReadonlyArray<ReadonlyArray<string>>,
  unbroken: ReadonlyArray<string> = []
): string => {
  const widths = columnWidths(
    header.map((title, column) => [title, ...rows.map((row) => row[column] ?? "")]),
    header.map((title) => unbroken.includes(title))
  )
  const lines = (cells: ReadonlyArray<string>) => {
    const wrapped = widths.map((width, column) => wrap(cells[column] ?? "", width))
    const height = Math.max(...wrapped.map((parts) => parts.length))
    return Array.from({ length: height }, (_, line) =>
      widths
        .map((width, column) => (wrapped[column]?.[line] ?? "").padEnd(width))
        .join("  ")
        .trimEnd()
    )
  }
  return [header, ...rows].flatMap(lines).join("\n")
}
