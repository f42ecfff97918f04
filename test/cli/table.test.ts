import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
import { table } from "../../src/app/admin/table"
import { constantFrom, integer } from "../support/arbitraries"

const cell = Arbitrary.schema(Schema.String.check(Schema.isPattern(/^[a-z0-9@.-]{1,12}$/)))

/** A header of 1 to 5 columns and up to 6 rows, every row as wide as the header. */
const grid = Arbitrary.flatMap(integer(1, 5), (width) => {
  const row = Arbitrary.array(cell, { minLength: width, maxLength: width })
  return Arbitrary.all([row, Arbitrary.array(row, { maxLength: 6 })])
})

const word = Arbitrary.schema(Schema.String.check(Schema.isPattern(/^[a-z]{5,12}$/)))

/** Prose of 3 to 7 words of 5 to 12 letters, each followed by a space or a comma: 17 to 90 characters. */
const prose = Arbitrary.map(
  Arbitrary.array(Arbitrary.all([word, constantFrom(" ", ",")]), { minLength: 3, maxLength: 7 }),
  (words) =>
    words
      .map(([text, after]) => text + after)
      .join("")
      .slice(0, -1)
)
const id = Arbitrary.schema(Schema.String.check(Schema.isPattern(/^[0-9a-f]{36}$/)))

/** Rows of an id and 4 or 5 columns of prose: wider than 100 columns (36 + 4 × 17 + 4 × 2 at the least). */
const wide = Arbitrary.flatMap(integer(4, 5), (width) =>
  Arbitrary.array(Arbitrary.all([id, Arbitrary.array(prose, { minLength: width, maxLength: width })]), {
    minLength: 1,
    maxLength: 4
  })
)

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

  it.prop(
    "a wider table fits in 100 columns: its ids whole on the row's first line, the rest of a cell on the lines below, in its column",
    [wide],
    ([rows]) => {
      const header = ["ID", ...(rows[0]?.[1] ?? []).map((_, i) => `COLUMN ${i}`)]
      const lines = table(
        header,
        rows.map(([key, cells]) => [key, ...cells]),
        ["ID"]
      ).split("\n")
      for (const line of lines) expect(line.length).toBeLessThanOrEqual(100)
      expect(lines.length).toBeGreaterThan(rows.length + 1)
      expect(lines[0]).toMatch(/^ID {36}COLUMN 0 /)
      const starts = header.map((title) => lines[0]?.indexOf(title) ?? -1)
      const rowStarts = lines.flatMap((line, index) => (index > 0 && /^[0-9a-f]/.test(line) ? [index] : []))
      expect(rowStarts).toHaveLength(rows.length)
      for (const [n, [key, cells]] of rows.entries()) {
        const own = lines.slice(rowStarts[n], rowStarts[n + 1] ?? lines.length)
        expect(own[0]?.slice(0, 36)).toBe(key)
        // A cell read down its column is the cell (but for the spaces and commas where its lines broke).
        for (const [i, text] of cells.entries()) {
          const from = starts[i + 1] ?? 0
          const to = starts[i + 2] ?? Number.POSITIVE_INFINITY
          const pieces = own.map((line) => line.slice(from, to).trim()).filter((piece) => piece !== "")
          expect(pieces.join("").replace(/[ ,]/g, "")).toBe(text.replace(/[ ,]/g, ""))
        }
      }
    }
  )

  it("an API key listing too wide for 100 columns: the id whole, the other cells broken between words", () => {
    const id = "0b7e5a52-9d8f-4f3c-8a59-1e6f1d2c3b4a"
    const lines = table(
      ["ID", "NAME", "HOLDER", "ROLES", "CREATED", "STATE"],
      [
        [
          id,
          "nightly importer of the ledger",
          "service account",
          "sales,support,billing",
          "2026-11-23 09:41Z",
          "active"
        ]
      ],
      ["ID"]
    ).split("\n")
    expect(lines).toEqual([
      "ID                                    NAME          HOLDER        ROLES         CREATED       STATE",
      `${id}  nightly       service       sales,        2026-11-23    active`,
      "                                      importer of   account       support,      09:41Z",
      "                                      the ledger                  billing"
    ])
  })
})
