import { expect, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { createHash } from "node:crypto"
import { apiPolicy } from "../../src/http/SecurityHeaders"
import { signedInMember } from "../support/api"
import { baseUrl, freshWorkspace, testApp, TestApp } from "../support/TestApp"
import { request } from "../support/http"
import { openSse } from "../support/sse"

/** Security headers on every kind of response (docs/security.md, "Response headers"). */

const expectCommonHeaders = (headers: Headers, what: string) => {
  expect(headers.get("x-content-type-options"), what).toBe("nosniff")
  expect(headers.get("referrer-policy"), what).toBe("no-referrer")
  expect(headers.get("x-frame-options"), what).toBe("DENY")
  expect(headers.get("content-security-policy"), what).toContain("frame-ancestors 'none'")
}

layer(TestApp, { excludeTestServices: true })("security headers", (it) => {
  it.effect(
    "on a 200, a 404, a 401, a 403, a 413 and a 400: nosniff, no referrer, no framing, a CSP that allows nothing",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const responses = {
          "200 health": yield* request(`${base}/api/health`),
          "404": yield* request(`${base}/api/no-such-route`),
          "401": yield* request(`${base}/api/auth/me`),
          "403": yield* request(`${base}/api/auth/login`, {
            method: "POST",
            headers: { origin: "https://evil.example" },
            json: {}
          }),
          "413": yield* request(`${base}/api/auth/login`, { method: "POST", json: { password: "x".repeat(20_000) } }),
          "400": yield* request(`${base}/api/auth/login`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: "{"
          })
        }
        for (const [what, response] of Object.entries(responses)) {
          expect(response.status, what).toBe(Number(what.slice(0, 3)))
          expectCommonHeaders(response.headers, what)
          expect(response.headers.get("content-security-policy"), what).toBe(apiPolicy)
          expect(response.headers.get("strict-transport-security"), what).toBeNull()
        }
      })
  )

  it.effect("the broadcast stream's own head carries them too", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const { cookie } = yield* signedInMember(base, yield* freshWorkspace)
      const response = yield* openSse(`${base}/api/broadcast`, { cookie })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toBe("text/event-stream")
      expectCommonHeaders(response.headers, "stream")
      expect(response.headers.get("content-security-policy")).toBe(apiPolicy)
    })
  )

  it.effect("the docs page may run exactly its own inline scripts (by hash), nothing from elsewhere", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const docs = yield* request(`${base}/api/docs`)
      expect(docs.status).toBe(200)
      expectCommonHeaders(docs.headers, "docs")
      const policy = docs.headers.get("content-security-policy") ?? ""
      const scripts = [...String(docs.body).matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) => m[1] ?? "")
      expect(scripts.length).toBe(1)
      const hash = createHash("sha256")
        .update(scripts[0] ?? "")
        .digest("base64")
      expect(policy).toContain(`script-src 'sha256-${hash}';`)
      expect(policy).toMatch(/^default-src 'none';/)
      expect(policy).not.toContain("unsafe-eval")
    })
  )
})

layer(testApp({ hstsMaxAge: Option.some(31_536_000) }), { excludeTestServices: true })("HSTS when configured", (it) => {
  it.effect("HSTS_MAX_AGE adds Strict-Transport-Security to every response", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      for (const path of ["/api/health", "/api/no-such-route", "/api/docs"]) {
        const response = yield* request(`${base}${path}`)
        expect(response.headers.get("strict-transport-security"), path).toBe("max-age=31536000")
      }
    })
  )
})
