import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { pagePolicy } from "../../src/http/SecurityHeaders"
import { WebRoot } from "../../src/http/WebRoot"
import { baseUrl, testApp } from "../support/TestApp"
import { request } from "../support/http"

/**
 * The web page as the service serves it at `/`, from a build folder of the
 * test's own (a stand-in build: the real one is driven in test/browser).
 */

/** A temporary build folder holding `files`, removed when the scope closes. */
const buildFolder = (files: Record<string, string>) =>
  Layer.effect(
    WebRoot,
    Effect.acquireRelease(
      Effect.promise(async () => {
        const root = await mkdtemp(join(tmpdir(), "web-page-"))
        for (const [path, text] of Object.entries(files)) {
          await mkdir(dirname(join(root, path)), { recursive: true })
          await writeFile(join(root, path), text)
        }
        return root
      }),
      (root) => Effect.promise(() => rm(root, { recursive: true, force: true }))
    )
  )

const indexHtml = `<!doctype html><title>Records</title><div id="root"></div>`
const built = testApp().pipe(
  Layer.provide(
    buildFolder({ "index.html": indexHtml, "assets/app-abc123.js": "console.log(1)", "favicon.svg": "<svg/>" })
  )
)

const get = (path: string) => Effect.flatMap(baseUrl, (base) => request(`${base}${path}`))

layer(built, { excludeTestServices: true })("the web page at /", (it) => {
  it.effect(
    "the page, its files and its 404s carry the security headers; the page's CSP allows its own files only",
    () =>
      Effect.gen(function* () {
        for (const path of ["/", "/records/crm/deal", "/assets/app-abc123.js", "/missing.js"]) {
          const response = yield* get(path)
          expect(response.headers.get("x-content-type-options"), path).toBe("nosniff")
          expect(response.headers.get("x-frame-options"), path).toBe("DENY")
          expect(response.headers.get("referrer-policy"), path).toBe("no-referrer")
          expect(response.headers.get("content-security-policy"), path).toBe(pagePolicy)
        }
      })
  )

  it.effect("serves index.html at / and at the page's own routes, revalidated on every load", () =>
    Effect.gen(function* () {
      for (const path of ["/", "/records/crm/deal", "/records/crm/deal/0b6f7d1e?tab=timeline"]) {
        const response = yield* get(path)
        expect(response.status, path).toBe(200)
        expect(response.headers.get("content-type"), path).toMatch(/^text\/html/)
        expect(response.headers.get("cache-control"), path).toBe("no-cache")
        expect(response.body, path).toBe(indexHtml)
      }
    })
  )

  it.effect("serves built files with their type; hashed assets are cached for good", () =>
    Effect.gen(function* () {
      const script = yield* get("/assets/app-abc123.js")
      expect(script.status).toBe(200)
      expect(script.headers.get("content-type")).toMatch(/javascript/)
      expect(script.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
      expect(script.body).toBe("console.log(1)")
      const icon = yield* get("/favicon.svg")
      expect(icon.headers.get("content-type")).toMatch(/^image\/svg\+xml/)
      expect(icon.headers.get("cache-control")).toBe("no-cache")
    })
  )

  it.effect("a missing file is a 404, never index.html; nothing outside the build folder is reachable", () =>
    Effect.gen(function* () {
      for (const path of ["/assets/gone-123.js", "/..%2fpackage.json", "/%2e%2e/%2e%2e/package.json", "/%E0%A4%A"]) {
        const response = yield* get(path)
        expect(response.status, path).toBe(404)
        expect(response.body, path).toMatchObject({ _tag: "NotFound" })
      }
    })
  )

  it.effect("/api stays the API: unknown API routes are its JSON 404, known ones answer as before", () =>
    Effect.gen(function* () {
      for (const path of ["/api", "/api/", "/api/nope", "/api/records/crm", "/api/records/crm/deal/x/y/z"]) {
        const response = yield* get(path)
        expect(response.status, path).toBe(404)
        expect(response.headers.get("content-type"), path).toMatch(/^application\/json/)
        expect(response.body, path).toMatchObject({ _tag: "NotFound" })
      }
      expect((yield* get("/api/health")).status).toBe(200)
      expect((yield* get("/api/auth/me")).status).toBe(401)
      expect((yield* get("/api/docs")).headers.get("content-type")).toMatch(/^text\/html/)
    })
  )
})

const unbuilt = testApp().pipe(Layer.provide(buildFolder({})))

layer(unbuilt, { excludeTestServices: true })("the web page before it is built", (it) => {
  it.effect("/ answers 503 with what to run; a file is still a 404; the API works", () =>
    Effect.gen(function* () {
      for (const path of ["/", "/records/crm/deal"]) {
        const response = yield* get(path)
        expect(response.status, path).toBe(503)
        expect(response.headers.get("content-type"), path).toMatch(/^text\/html/)
        expect(String(response.body), path).toContain("npm run build:web")
      }
      expect((yield* get("/api/health")).status).toBe(200)
      expect((yield* get("/assets/app-abc123.js")).status).toBe(404)
    })
  )
})
