/**
 * A listing of the admin command line read back into rows of cells. Each
 * column starts where its title starts on the header line; a line whose
 * first column is blank goes on with the row above (a table narrowed to fit
 * 100 columns breaks a cell over lines, after a space or a comma: a piece is
 * joined to the one before with a space, or with nothing after a comma).
 */
export const readListing = (text: string): ReadonlyArray<ReadonlyArray<string>> => {
  const [header = "", ...lines] = text.split("\n").filter((line) => line.trim() !== "")
  const titles = header.trim().split(/ {2,}/)
  const starts: Array<number> = []
  for (const title of titles) starts.push(header.indexOf(title, starts.at(-1) ?? 0))
  const cellsOf = (line: string) => starts.map((start, i) => line.slice(start, starts[i + 1]).trim())
  const rows: Array<Array<string>> = [titles]
  for (const line of lines) {
    const cells = cellsOf(line)
    const last = rows.at(-1)
    if (cells[0] !== "" || last === undefined || rows.length === 1) rows.push(cells)
    else
      cells.forEach((piece, i) => {
        const before = last[i] ?? ""
        if (piece !== "") last[i] = before === "" || before.endsWith(",") ? before + piece : `${before} ${piece}`
      })
  }
  return rows
}

/** The row of a listing whose cell in `column` is `value`. */
export const rowOf = (text: string, column: number, value: string): ReadonlyArray<string> | undefined =>
  readListing(text).find((cells) => cells[column] === value)
