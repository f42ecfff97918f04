import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { build } from "vite"
import { startService } from "../support/service"
import { meaningfulLines, runProcess } from "../support/subprocess"
import { freshUser, freshWorkspace, TestServices, testPassword, uniqueSuffix } from "../support/TestApp"

/**
 * The build as an operator and an app author meet it: `npm run build` (run
 * here only when the build is missing or stale, as `npm start` does), the
 * compiled service started with plain `node`, and a JavaScript app that has
 * the package installed (`node_modules/audit-broadcast-service`) importing
 * `./client` and `./client/react` from plain Node.
 */

const repo = resolve(import.meta.dirname, "../..")

/** A folder holding the fixture app and a `node_modules` where the package is installed (linked). */
const appFolder = Effect.acquireRelease(
  Effect.sync(() => {
    const folder = mkdtempSync(join(tmpdir(), "client-app-"))
    mkdirSync(join(folder, "node_modules"))
    symlinkSync(repo, join(folder, "node_modules", "audit-broadcast-service"), "dir")
    return folder
  }),
  (folder) => Effect.sync(() => rmSync(folder, { recursive: true, force: true }))
)

const built = runProcess("node", ["scripts/build-if-stale.mjs"]).pipe(
  Effect.timeout("5 minutes"),
  Effect.tap((result) => Effect.sync(() => expect(result.code, result.stderr).toBe(0)))
)

/** The files `file` loads at start: itself and the chunks it imports statically, transitively (not `import()`). */
const staticClosure = (file: string, seen = new Set<string>()): Set<string> => {
  if (seen.has(file)) return seen
  seen.add(file)
  for (const match of readFileSync(file, "utf8").matchAll(/\bimport\s*(?:[^("]*?from\s*)?"(\.\/[^"]+)"/g)) {
    staticClosure(join(file, "..", match[1] ?? ""), seen)
  }
  return seen
}

layer(TestServices, { excludeTestServices: true })("the build", (it) => {
  it.effect(
    "the compiled service loads Swagger UI only when /api/docs is asked for, and then serves the docs page",
    () =>
      Effect.gen(function* () {
        yield* built
        const atStart = [...staticClosure(join(repo, "dist/server/main.js"))]
        expect(atStart.length).toBeGreaterThan(1)
        for (const file of atStart) expect(readFileSync(file, "utf8"), file).not.toContain("SwaggerUIBundle")
        const service = yield* startService({ QUEUE_PREFIX: `t-${uniqueSuffix()}` }, ["node", "dist/server/main.js"])
        const response = yield* Effect.promise(() => fetch(`${service.base}/api/docs`))
        expect(response.status).toBe(200)
        expect(response.headers.get("content-security-policy")).toMatch(/script-src 'sha256-/)
        expect(yield* Effect.promise(() => response.text())).toContain("SwaggerUIBundle")
      }),
    360_000
  )

  it.effect(
    "the compiled service runs on plain node, and a JavaScript app signs in, writes and reads its timeline through the compiled client",
    () =>
      Effect.gen(function* () {
        yield* built
        const service = yield* startService({ QUEUE_PREFIX: `t-${uniqueSuffix()}` }, ["node", "dist/server/main.js"])
        const workspace = yield* freshWorkspace
        const user = yield* freshUser({ workspace, role: "admin" })
        const folder = yield* appFolder
        const app = join(folder, "client-app.mjs")
        copyFileSync(join(repo, "test/build/fixtures/client-app.mjs"), app)

        const result = yield* runProcess("node", [app, service.base, workspace.slug, user.email, testPassword]).pipe(
          Effect.timeout("60 seconds")
        )
        expect(result.code, result.stderr).toBe(0)
        const [line] = meaningfulLines(result.stdout)
        expect(JSON.parse(line ?? "null")).toEqual({
          email: user.email,
          timeline: ["updated", "created"],
          renamed: { from: "Acme", to: "Acme Corporation" },
          decimal: "1350.50",
          reactBinding: true
        })
      }),
    360_000
  )

  it.effect(
    "a Vite app that imports ./client and ./client/react from the installed package builds",
    () =>
      Effect.gen(function* () {
        yield* built
        const folder = yield* appFolder
        writeFileSync(join(folder, "index.html"), '<!doctype html><script type="module" src="./main.js"></script>')
        writeFileSync(
          join(folder, "main.js"),
          [
            'import { createClient } from "audit-broadcast-service/client"',
            'import { recordQueryKeys } from "audit-broadcast-service/client/react"',
            'const client = createClient({ baseUrl: "https://service.example" })',
            "document.title = String(typeof client.auth.login) + Object.keys(recordQueryKeys).length",
            ""
          ].join("\n")
        )
        yield* Effect.promise(() =>
          build({ root: folder, configFile: false, logLevel: "silent", build: { outDir: join(folder, "out") } })
        )
        const assets = readdirSync(join(folder, "out", "assets")).filter((name) => name.endsWith(".js"))
        expect(assets).toHaveLength(1)
        expect(readFileSync(join(folder, "out", "assets", assets[0] ?? ""), "utf8")).toContain(
          "https://service.example"
        )
      }),
    360_000
  )
})
