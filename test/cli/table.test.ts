import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { table } from "../../src/app/admin/table"

const cell = fc.stringMatching(/^[a-z0-9@.-]{1,12}$/)

describe("the admin command line's tables", () => {
  it("every column starts at the same place on every line, two spaces after the widest cell before it", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 5 })
          .chain((width) =>
            fc.tuple(
              fc.array(cell, { minLength: width, maxLength: width }),
              fc.array(fc.array(cell, { minLength: width, maxLength: width }), { maxLength: 6 })
            )
          ),
        ([header, rows]) => {
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
    )
  })
})
