import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"

interface LockEntry {
  readonly version?: string
  readonly optionalDependencies?: Readonly<Record<string, string>>
}

const lock: { readonly packages: Readonly<Record<string, LockEntry>> } = JSON.parse(
  readFileSync(new URL("../../package-lock.json", import.meta.url), "utf8")
)

// Node's lookup: the package's own node_modules, then each enclosing one up to the root.
const resolveFrom = (from: string, name: string): string | undefined => {
  let base = from
  for (;;) {
    const candidate = `${base === "" ? "" : `${base}/`}node_modules/${name}`
    if (lock.packages[candidate] !== undefined) return candidate
    if (base === "") return undefined
    const cut = base.lastIndexOf("/node_modules/")
    base = cut < 0 ? "" : base.slice(0, cut)
  }
}

describe("package-lock.json", () => {
  it("holds every optional dependency of every package, so `npm ci` accepts it on any platform", () => {
    const missing = Object.entries(lock.packages).flatMap(([path, entry]) =>
      Object.keys(entry.optionalDependencies ?? {})
        .filter((name) => resolveFrom(path, name) === undefined)
        .map((name) => `${path} -> ${name}`)
    )
    expect(missing).toEqual([])
  })

  it("is checked against other platforms' native builds, not only this machine's", () => {
    const nativeBuilds = Object.keys(lock.packages).filter((path) =>
      /@biomejs\/cli-(darwin|win32)|@rollup\/rollup-(darwin|win32)|@esbuild\/(darwin|win32)/.test(path)
    )
    expect(nativeBuilds.length).toBeGreaterThanOrEqual(12)
  })
})
