import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { table } from "../../src/app/admin/table"
import { integer } from "../support/arbitraries"

const cell = Arbitrary.schema(Schema.String.check(Schema.isPattern(/^[a-z0-9@.-]{1,12}$/)))

/** A header of 1 to 5 columns and up to 6 rows, every row as wide as the header. */
const grid = Arbitrary.flatMap(integer(1, 5), (width) => {
  const row = Arbitrary.array(cell, { minLength: width, maxLength: width })
  return Arbitrary.all([row, Arbitrary.array(row, { maxLength: 6 })])
})

describe("the admin command line's tables", () => {
  it.prop(
    "every column starts at the same place on every line, two spaces after the widest cell before it",
    [grid],
    ([[header, rows]]) => {
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
