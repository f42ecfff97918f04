import { describe, expect, it } from "@effect/vitest"
import { execFileSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { join, resolve } from "node:path"

/**
 * No type assertions in src/ and web/src (docs/architecture.md, "Casts
 * kept"): an `x as T` or `<T>x` hides a type the code should prove instead
 * (a schema decode, a type guard, `satisfies`, a generic). Biome's parser
 * finds them, so `as const`, `import { a as b }`, `export { a as b }` and
 * the word in strings, comments or JSX text never count.
 */

const root = resolve(__dirname, "../..")

/**
 * The casts that stay, by file: how many, and why (the same reason as the
 * comment above each one, and a line under "Casts kept" in
 * docs/architecture.md). A file not listed may hold none.
 */
const kept: Record<string, { readonly count: number; readonly why: string }> = {
  "src/http/Server.ts": {
    count: 1,
    why: "effect/http-api types the OpenApi.Transform hook's document as Record<string, any>"
  }
}

const assertions = 'or { TsAsExpression(ty = $t) where { $t <: not r"const" }, TsTypeAssertionExpression() }'

interface Found {
  readonly location: { readonly path: string; readonly start: { readonly line: number } }
}

/** `file:line` of every type assertion under `paths`. */
const castsIn = (...paths: ReadonlyArray<string>): Array<string> => {
  const output = execFileSync(
    join(root, "node_modules/.bin/biome"),
    ["search", "--reporter=json", "--max-diagnostics=none", assertions, ...paths],
    { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }
  )
  const report: { readonly diagnostics: ReadonlyArray<Found> } = JSON.parse(output)
  return report.diagnostics.map(({ location }) => `${location.path}:${location.start.line}`)
}

const countByFile = (casts: ReadonlyArray<string>) => {
  const counts = new Map<string, number>()
  for (const cast of casts) {
    const file = cast.slice(0, cast.lastIndexOf(":"))
    counts.set(file, (counts.get(file) ?? 0) + 1)
  }
  return counts
}

describe("casts: none in src/ and web/src beyond the kept list", () => {
  it("finds `as T` and `<T>x`, and not `as const`, renames or the word in a string", () => {
    const file = "test/architecture/fixtures/casts.ts"
    expect(castsIn(file)).toEqual([`${file}:7`, `${file}:9`])
  })

  it("no file holds more casts than the kept list allows, and none fewer (the list stays true)", () => {
    const casts = castsIn("src", "web/src")
    const counts = countByFile(casts)
    const offending = [...new Set([...counts.keys(), ...Object.keys(kept)])].flatMap((file) => {
      const found = counts.get(file) ?? 0
      const allowed = kept[file]?.count ?? 0
      if (found === allowed) return []
      const lines = casts.filter((cast) => cast.startsWith(`${file}:`)).join(", ")
      return [`${file}: ${found} cast(s), ${allowed} kept${lines === "" ? "" : ` (${lines})`}`]
    })
    expect(offending).toEqual([])
  })

  it("docs/architecture.md names every kept cast", () => {
    const docs = readFileSync(join(root, "docs/architecture.md"), "utf8")
    const section = docs.slice(docs.indexOf("## Casts kept"))
    expect(docs).toContain("## Casts kept")
    expect(Object.keys(kept).filter((file) => !section.includes(file))).toEqual([])
  })
})
