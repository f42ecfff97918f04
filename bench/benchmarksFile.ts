import { existsSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

/** BENCHMARKS.md at the top of the repository: every bench script writes its own section of it. */
export const benchmarksFile = join(import.meta.dirname, "..", "BENCHMARKS.md")

const intro = `# Benchmarks

Numbers measured by the scripts in \`bench/\`, each run on the test database (real PostgreSQL).
Every section is (re)written by its script; the others are left as they are.

`

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/** Replaces the section "## `heading`" of BENCHMARKS.md (up to the next "## " heading), or appends it. */
export const writeBenchmarkSection = (heading: string, text: string): void => {
  const current = existsSync(benchmarksFile) ? readFileSync(benchmarksFile, "utf8") : intro
  const start = current.search(new RegExp(`^## ${escapeRegExp(heading)}\\s*$`, "m"))
  let next: string
  if (start === -1) {
    next = `${current.trimEnd()}\n\n${text}`
  } else {
    const rest = current.slice(start + 1)
    const end = rest.search(/^## /m)
    next = current.slice(0, start) + text + (end === -1 ? "" : `\n${rest.slice(end)}`)
  }
  writeFileSync(benchmarksFile, `${next.trimEnd()}\n`)
}
