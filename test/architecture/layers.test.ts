import { describe, expect, it } from "@effect/vitest"
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs"
import { dirname, join, relative, resolve } from "node:path"

/**
 * The layers point one way (docs/architecture.md): api <- domain <- http <- app <- main.
 * Every import in src/ and web/src is read from the source text (static
 * `import`/`export ... from`, side-effect `import "..."` and `import("...")`),
 * resolved to a file and checked against the rules below.
 */

const root = resolve(__dirname, "../..")

type Layer = "api" | "domain" | "http" | "app" | "cli" | "client" | "main" | "web"

/** The folders of src/ with a layer of their own; every other folder is domain. */
const namedLayers: Record<string, Layer> = { api: "api", http: "http", app: "app", cli: "cli", client: "client" }

/**
 * The domain folders in the order their imports run: each may import only the folders listed
 * before it (docs/architecture.md, "The domain, in order"). A new folder has to find its place here.
 */
const domainOrder = [
  "json",
  "messages",
  "config",
  "metrics",
  "context",
  "redis",
  "db",
  "diff",
  "chain",
  "events",
  "plugins",
  "broadcast",
  "cache",
  "tenancy",
  "auth",
  "agents",
  "queue",
  "workflows",
  "outbound",
  "feedPositions",
  "unitOfWork",
  "audit",
  "idempotency",
  "jobs",
  "records",
  "ledger",
  "presence",
  "seeding",
  "health",
  "shutdown",
  "workers"
] as const

const domainRank = (file: string) =>
  domainOrder.indexOf((folderOf(file).split("/")[1] ?? "") as (typeof domainOrder)[number])

/** Pure, browser-safe domain folders the client may use besides api/. */
const clientSafeFolders = new Set(["diff", "json"])

/**
 * The packages the contract may use: api/ is read by the server, the client and the page alike. Effect 4
 * ships HttpApi inside `effect` (`effect/http-api`, `effect/http`), so `effect` and its subpaths only.
 */
const apiPackages = /^effect(\/.*)?$/

const layerOf = (file: string): Layer => {
  const path = relative(root, file)
  if (path.startsWith("web/")) return "web"
  if (path === "src/main.ts") return "main"
  const folder = path.split("/")[1] ?? ""
  return namedLayers[folder] ?? "domain"
}

const folderOf = (file: string) => relative(root, file).split("/").slice(0, 2).join("/")

/** What each layer may import of the project, by layer. */
const allowed: Record<Layer, ReadonlyArray<Layer>> = {
  api: ["api"],
  domain: ["api", "domain"],
  http: ["api", "domain", "http"],
  app: ["api", "domain", "http", "app"],
  cli: ["api", "domain", "http", "app", "cli"],
  main: ["api", "domain", "http", "app"],
  // Narrowed further below: only the pure folders of the domain.
  client: ["api", "client", "domain"],
  // Narrowed further below: src/client and src/api only.
  web: ["web", "api", "client"]
}

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) return sourceFiles(path)
    return /\.(ts|tsx)$/.test(name) && !name.endsWith(".d.ts") ? [path] : []
  })

/** Block comments and whole-line comments go first, so an example in a comment is no import. */
const withoutComments = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, "").replace(/^\s*\/\/.*$/gm, "")

const importPattern =
  /(?:^|[;\s])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']\s*\)/g

const specifiersOf = (file: string): Array<string> =>
  [...withoutComments(readFileSync(file, "utf8")).matchAll(importPattern)].flatMap((match) => {
    const specifier = match[1] ?? match[2]
    return specifier === undefined ? [] : [specifier]
  })

const candidates = (base: string) => [
  base,
  `${base}.ts`,
  `${base}.tsx`,
  join(base, "index.ts"),
  join(base, "index.tsx")
]

const resolveRelative = (from: string, specifier: string): string | undefined =>
  candidates(resolve(dirname(from), specifier.replace(/\.js$/, ""))).find(
    (path) => existsSync(path) && statSync(path).isFile()
  )

interface Import {
  readonly from: string
  readonly specifier: string
  /** The project file it resolves to; undefined for a package. */
  readonly to: string | undefined
}

const files = [...sourceFiles(join(root, "src")), ...sourceFiles(join(root, "web/src"))]

const imports: ReadonlyArray<Import> = files.flatMap((from) =>
  specifiersOf(from).map((specifier) => ({
    from,
    specifier,
    to: specifier.startsWith(".") ? resolveRelative(from, specifier) : undefined
  }))
)

const describeImport = ({ from, specifier }: Import) => `${relative(root, from)} imports "${specifier}"`

/** Why the import breaks a rule, or undefined when it keeps them all. */
const violation = (edge: Import): string | undefined => {
  const fromLayer = layerOf(edge.from)
  if (edge.to === undefined) {
    if (edge.specifier.startsWith(".")) return "it resolves to no file"
    if (fromLayer === "api" && !apiPackages.test(edge.specifier)) return "api/ imports only effect (and its subpaths)"
    return undefined
  }
  const toLayer = layerOf(edge.to)
  if (toLayer === "main") return "nothing imports main"
  if (!allowed[fromLayer].includes(toLayer)) return `${fromLayer} may not import ${toLayer}`
  if (fromLayer === "domain" && toLayer === "domain" && folderOf(edge.from) !== folderOf(edge.to)) {
    const [from, to] = [folderOf(edge.from), folderOf(edge.to)]
    if (domainRank(edge.from) < 0 || domainRank(edge.to) < 0) return `${from} or ${to} is missing from domainOrder`
    if (domainRank(edge.to) > domainRank(edge.from))
      return `${from} may not import ${to}, which comes after it in domainOrder`
  }
  if (fromLayer === "client" && toLayer === "domain" && !clientSafeFolders.has(folderOf(edge.to).split("/")[1] ?? "")) {
    return `the client imports only api/, client/ and ${[...clientSafeFolders].join(", ")}, never a server folder`
  }
  if (fromLayer === "web" && toLayer !== "web" && !["src/api", "src/client"].includes(folderOf(edge.to))) {
    return "web/src imports only src/client and src/api"
  }
  return undefined
}

/** Every cycle of the file graph, each once, as a path that returns to its first file. */
const cyclesOf = (edges: ReadonlyArray<Import>): Array<Array<string>> => {
  const next = new Map<string, Array<string>>()
  for (const { from, to } of edges) if (to !== undefined) next.set(from, [...(next.get(from) ?? []), to])
  // Tarjan's strongly connected components: a component of more than one file (or a file importing itself) is a cycle.
  let index = 0
  const indexOf = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const components: Array<Array<string>> = []
  const visit = (file: string) => {
    indexOf.set(file, index)
    low.set(file, index)
    index++
    stack.push(file)
    onStack.add(file)
    for (const target of next.get(file) ?? []) {
      if (!indexOf.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file) ?? 0, low.get(target) ?? 0))
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file) ?? 0, indexOf.get(target) ?? 0))
    }
    if (low.get(file) === indexOf.get(file)) {
      const component: Array<string> = []
      let member = stack.pop()
      while (member !== undefined) {
        onStack.delete(member)
        component.push(member)
        if (member === file) break
        member = stack.pop()
      }
      if (component.length > 1 || (next.get(file) ?? []).includes(file)) components.push(component.reverse())
    }
  }
  for (const file of next.keys()) if (!indexOf.has(file)) visit(file)
  return components
}

describe("layers: api <- domain <- http <- app <- main", () => {
  it("reads the imports of every source file", () => {
    expect(files.length).toBeGreaterThan(100)
    expect(imports.filter((edge) => edge.to !== undefined).length).toBeGreaterThan(500)
  })

  it("every import points down or sideways, never up", () => {
    const offending = imports.flatMap((edge) => {
      const reason = violation(edge)
      return reason === undefined ? [] : [`${describeImport(edge)}: ${reason}`]
    })
    expect(offending).toEqual([])
  })

  it("every domain folder has its place in the domain order", () => {
    const domainFolders = new Set(
      files.filter((file) => layerOf(file) === "domain").map((file) => folderOf(file).split("/")[1] ?? "")
    )
    expect([...domainFolders].filter((folder) => !(domainOrder as ReadonlyArray<string>).includes(folder))).toEqual([])
  })

  it("only http/ and app/ build the HTTP server: no other layer names HttpApiBuilder", () => {
    const offending = files
      .filter((file) => !["http", "app"].includes(layerOf(file)))
      .filter((file) => /\bHttpApiBuilder\b/.test(withoutComments(readFileSync(file, "utf8"))))
      .map((file) => relative(root, file))
    expect(offending).toEqual([])
  })

  it("no files import each other in a circle", () => {
    const cycles = cyclesOf(imports).map((component) => component.map((file) => relative(root, file)).join(" -> "))
    expect(cycles).toEqual([])
  })

  it("the rules catch what they forbid", () => {
    const edge = (from: string, to: string): Import => ({ from: join(root, from), specifier: to, to: join(root, to) })
    expect(violation(edge("src/records/Records.ts", "src/http/Server.ts"))).toBe("domain may not import http")
    expect(violation(edge("src/api/Api.ts", "src/records/Records.ts"))).toBe("api may not import domain")
    expect(violation(edge("src/http/Server.ts", "src/app/AppLayer.ts"))).toBe("http may not import app")
    expect(violation(edge("src/app/AppLayer.ts", "src/main.ts"))).toBe("nothing imports main")
    expect(violation(edge("src/client/records.ts", "src/records/Records.ts"))).toMatch(/never a server folder/)
    expect(violation(edge("web/src/App.tsx", "src/diff/diff.ts"))).toBe("web may not import domain")
    expect(violation(edge("web/src/App.tsx", "src/client/index.ts"))).toBeUndefined()
    expect(violation({ from: join(root, "src/api/Api.ts"), specifier: "node:fs", to: undefined })).toMatch(
      /only effect/
    )
    expect(
      violation({ from: join(root, "src/api/Api.ts"), specifier: "@effect/platform-node", to: undefined })
    ).toMatch(/only effect/)
    expect(
      violation({ from: join(root, "src/api/Api.ts"), specifier: "effect/http-api", to: undefined })
    ).toBeUndefined()
    expect(violation(edge("src/records/Records.ts", "src/api/errors.ts"))).toBeUndefined()
    expect(violation(edge("src/records/Records.ts", "src/unitOfWork/CurrentUnit.ts"))).toBeUndefined()
    expect(violation(edge("src/cache/Caches.ts", "src/auth/Grants.ts"))).toBe(
      "src/cache may not import src/auth, which comes after it in domainOrder"
    )
    expect(violation(edge("src/unitOfWork/UnitOfWork.ts", "src/audit/Timeline.ts"))).toMatch(/comes after it/)
    const a = join(root, "src/a.ts")
    const b = join(root, "src/b.ts")
    expect(
      cyclesOf([
        { from: a, specifier: "./b", to: b },
        { from: b, specifier: "./a", to: a }
      ])
    ).toHaveLength(1)
  })
})
