import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { resolve } from "node:path"

/**
 * Every JSON text the service, its client and its page read goes through
 * `parseJson` (src/json/parseJson.ts), or a schema made by `fromJsonText`:
 * the engine's own reader can give a key another key's name
 * (nodejs/node#63785). A new `JSON.parse`, `Schema.fromJsonString` or
 * `Response.json()` elsewhere would bring that back for what it reads.
 */

const root = resolve(__dirname, "../..")

const readers = /\bJSON\.parse\b|\bfromJsonString\b|\bUnknownFromJsonString\b|\.json\(\)/

const sources = (): Array<string> =>
  execFileSync("git", ["ls-files", "--cached", "--others", "--exclude-standard", "src", "web/src"], {
    cwd: root,
    encoding: "utf8"
  })
    .split("\n")
    .filter((path) => /\.(ts|tsx)$/.test(path) && !path.startsWith("src/json/"))

describe("JSON reading", () => {
  it("goes through parseJson or fromJsonText everywhere in src/ and web/src", () => {
    const files = sources()
    expect(files.length).toBeGreaterThan(100)
    const found = files.flatMap((path) =>
      readFileSync(resolve(root, path), "utf8")
        .split("\n")
        .flatMap((line, index) => (readers.test(line) ? [`${path}:${index + 1}: ${line.trim()}`] : []))
    )
    expect(found).toEqual([])
  })
})
