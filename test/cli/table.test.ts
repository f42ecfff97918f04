import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { table } from "../../src/app/admin/table"

const Cell = Schema.String.check(Schema.isPattern(/^[a-z0-9@.-]{1,12}$/))

describe("the admin command line's tables", () => {
  it.prop(
    "every column starts at the same place on every line, two spaces after the widest cell before it",
    [
      Arbitrary.schema(Schema.Array(Cell).check(Schema.isMinLength(1), Schema.isMaxLength(5))),
      Arbitrary.schema(Schema.Array(Schema.Array(Cell)).check(Schema.isMaxLength(6)))
    ],
    ([header, generated]) => {
      // Every row as wide as the header.
      const rows = generated.map((row) => header.map((_, column) => row[column] ?? "x"))
      const lines = table(header, rows).split("\n")
      expect(lines).toHaveLength(rows.length + 1)
      let start = 0
      for (const column of header.keys()) {
        const cells = [header, ...rows].map((row) => row[column] ?? "")
        for (const [index, line] of lines.entries())
          expect(line.slice(start, start + (cells[index] ?? "").length)).toBe(cells[index])
        start += Math.max(...cells.map((text) => text.length)) + 2
      }
      for (const line of lines) expect(line).toBe(line.trimEnd())
    }
  )
})
