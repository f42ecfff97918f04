import { createHash } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { importBatches } from "../../src/app/admin/importFile"

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

describe("the batches of an import file", () => {
  it("each key chains the key before it with the batch's lines; empty lines are skipped, not items", async () => {
    const dir = mkdtempSync(join(tmpdir(), "import-batches-"))
    try {
      const lines = ['{"title":"A"}', "", '{"title":"B é"}', '{"title":"C"}', '{"id":"x","values":{"title":"D"}}']
      const path = join(dir, "records.ndjson")
      writeFileSync(path, `${lines.join("\r\n")}\n`)
      const batches = []
      for await (const batch of importBatches(path, "seed", 2)) batches.push(batch)

      const first = sha256(`${sha256("records import\nseed")}\n${lines[0]}\n${lines[2]}`)
      const second = sha256(`${first}\n${lines[3]}\n${lines[4]}`)
      expect(batches.map((batch) => [batch.number, batch.lines, batch.key])).toEqual([
        [1, [1, 3], `import-${first}`],
        [2, [4, 5], `import-${second}`]
      ])
      expect(batches[1]?.items).toEqual([{ create: { title: "C" } }, { update: { id: "x", values: { title: "D" } } }])
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
