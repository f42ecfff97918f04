import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { createRecord, expectStatus, signedInMember } from "../support/api"
import { baseUrl, freshUser, freshWorkspace, testApp, testPassword } from "../support/TestApp"
import { request } from "../support/http"

/**
 * Cross-site request forgery (docs/security.md, "Cross-site requests"): a
 * state-changing request signed in with the session cookie must come from
 * the service's own page (its Origin, Sec-Fetch-Site: same-origin, or an
 * allowed origin), else 403 and nothing changes; a bearer key needs none.
 */

const allowed = "https://app.example.com"
const foreign = "https://evil.example"

const refused = (response: { status: number; body: unknown }) => {
  expect(response.status, JSON.stringify(response.body)).toBe(403)
  expect((response.body as { _tag: string })._tag).toBe("Forbidden")
}

const setup = Effect.gen(function* () {
  const base = yield* baseUrl
  const workspace = yield* freshWorkspace
  const { client, cookie } = yield* signedInMember(base, workspace)
  const company = yield* createRecord(client, "crm/company", { name: "Acme", wonDeals: 0 })
  const count = Effect.map(
    client.get("/api/records/crm/company?limit=500"),
    (r) => (expectStatus(200)(r) as { records: Array<unknown> }).records.length
  )
  return { base, workspace, client, cookie, company, count }
})

layer(testApp({ allowedOrigins: [allowed] }), { excludeTestServices: true })("cross-site requests", (it) => {
  it.effect("a foreign Origin with the session cookie is 403 on every state-changing route, and nothing changes", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const before = yield* s.count
      const record = `/api/records/crm/company/${s.company.id}`
      const writes: Array<{ method: string; path: string; json?: unknown }> = [
        { method: "POST", path: "/api/records/crm/company", json: { values: { name: "Evil" } } },
        { method: "PATCH", path: record, json: { values: { name: "Evil" } } },
        { method: "DELETE", path: record },
        { method: "POST", path: `${record}/archive` },
        { method: "PUT", path: `/api/presence/crm/company/${s.company.id}/tab-1` },
        { method: "DELETE", path: `/api/presence/crm/company/${s.company.id}/tab-1` },
        { method: "POST", path: "/api/auth/logout" }
      ]
      for (const { method, path, json } of writes) {
        const variants: Array<Record<string, string>> = [
          { origin: foreign },
          { origin: "null" },
          { origin: s.base.replace("127.0.0.1", "localhost") },
          { origin: foreign, "sec-fetch-site": "cross-site" },
          { "sec-fetch-site": "same-site" }
        ]
        for (const headers of variants) {
          const response = yield* request(`${s.base}${path}`, {
            method,
            headers: { cookie: s.cookie, ...headers },
            json,
            origin: null
          })
          refused(response)
        }
      }
      // Nothing changed: the same records, the company untouched, the session still good.
      expect(yield* s.count).toBe(before)
      const company = expectStatus(200)(yield* s.client.get(`/api/records/crm/company/${s.company.id}`))
      expect(company).toMatchObject({ state: "operational", values: { name: "Acme" } })
    })
  )

  it.effect(
    "a cookie-signed write with neither Origin nor Sec-Fetch-Site is 403 (browsers always send Origin on writes)",
    () =>
      Effect.gen(function* () {
        const s = yield* setup
        const before = yield* s.count
        const response = yield* request(`${s.base}/api/records/crm/company`, {
          method: "POST",
          headers: { cookie: s.cookie },
          json: { values: { name: "No origin" } },
          origin: null
        })
        refused(response)
        expect((response.body as { message: string }).message).toBe(
          "a request signed in with the session cookie must carry an Origin header"
        )
        expect(yield* s.count).toBe(before)
        // Reads need no Origin.
        expectStatus(200)(yield* request(`${s.base}/api/auth/me`, { headers: { cookie: s.cookie }, origin: null }))
      })
  )

  it.effect(
    "allowed: the service's own Origin, Sec-Fetch-Site: same-origin, an allow-listed Origin, a bearer key without Origin",
    () =>
      Effect.gen(function* () {
        const s = yield* setup
        const before = yield* s.count
        const create = (headers: Record<string, string>) =>
          request(`${s.base}/api/records/crm/company`, {
            method: "POST",
            headers,
            json: { values: { name: "Fine" } },
            origin: null
          })
        expectStatus(201)(yield* create({ cookie: s.cookie, origin: s.base }))
        expectStatus(201)(yield* create({ cookie: s.cookie, "sec-fetch-site": "same-origin" }))
        expectStatus(201)(yield* create({ cookie: s.cookie, origin: allowed }))
        // Behind a TLS proxy the page's origin is https.
        expectStatus(201)(
          yield* create({ cookie: s.cookie, origin: s.base.replace("http:", "https:"), "x-forwarded-proto": "https" })
        )
        const { key } = yield* (yield* ApiKeys).create(s.workspace, "importer", "admin")
        expectStatus(201)(yield* create({ authorization: `Bearer ${key}` }))
        expectStatus(201)(yield* create({ authorization: `Bearer ${key}`, origin: foreign }))
        expect(yield* s.count).toBe(before + 6)
      })
  )

  it.effect(
    "login: a foreign Origin is 403 (no login CSRF); the own origin, an allowed one, or none (curl) signs in",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const user = yield* freshUser({ workspace, role: "admin" })
        const login = (headers: Record<string, string>) =>
          request(`${base}/api/auth/login`, {
            method: "POST",
            headers,
            json: { workspace: workspace.slug, email: user.email, password: testPassword },
            origin: null
          })
        const evil = yield* login({ origin: foreign })
        refused(evil)
        expect(evil.headers.get("set-cookie")).toBeNull()
        refused(yield* login({ "sec-fetch-site": "cross-site" }))
        expectStatus(200)(yield* login({ origin: base }))
        expectStatus(200)(yield* login({ origin: allowed }))
        expectStatus(200)(yield* login({ "sec-fetch-site": "same-origin" }))
        expectStatus(200)(yield* login({}))
      })
  )
})
