import { describe, expect, it } from "@effect/vitest"
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join, resolve } from "node:path"

/**
 * The README's configuration table is the one place listing the environment:
 * every variable the service reads has its row, and every row a variable
 * that is read. A variable added in src/ without a row fails here.
 */

const root = resolve(import.meta.dirname, "../..")

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.tsx?$/.test(name) ? [path] : []
  })

/**
 * Names read as `Config.<kind>("NAME")`, `process.env.NAME`, or any all-capitals literal in src/config/ (which
 * reads most through its own decoders, `port("PORT")`, to keep Effect 3's messages).
 */
const variablesRead = () => {
  const names = new Set<string>()
  for (const file of sourceFiles(join(root, "src"))) {
    const text = readFileSync(file, "utf8")
    for (const [, name] of text.matchAll(/\bConfig\.\w+\(\s*"([A-Z][A-Z0-9_]*)"/g)) names.add(name ?? "")
    for (const [, name] of text.matchAll(/\bprocess\.env(?:\.|\[")([A-Z][A-Z0-9_]*)/g)) names.add(name ?? "")
    if (file.includes(`${join("src", "config")}`))
      for (const [, name] of text.matchAll(/"([A-Z][A-Z0-9_]+)"/g)) names.add(name ?? "")
  }
  return names
}

const readmeRows = () => {
  const readme = readFileSync(join(root, "README.md"), "utf8")
  const table = readme.slice(readme.search(/^## Configuration\s*$/m))
  return new Set([...table.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map(([, name]) => name ?? ""))
}

describe("the README's configuration table", () => {
  it("has a row for every environment variable the service reads, and no other", () => {
    const read = [...variablesRead()].sort()
    expect(read.length).toBeGreaterThan(30)
    expect([...readmeRows()].sort()).toEqual(read)
  })
})
