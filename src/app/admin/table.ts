/**
 * Rows as aligned text columns under a header, for a terminal: every column
 * as wide as its widest cell, two spaces between columns, no trailing space.
 */
export const table = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): string => {
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => (row[column] ?? "").length)))
  const line = (cells: ReadonlyArray<string>) =>
    widths
      .map((width, column) => (cells[column] ?? "").padEnd(width))
      .join("  ")
      .trimEnd()
  return [line(header), ...rows.map(line)].join("\n")
}
