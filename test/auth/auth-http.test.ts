import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Roles } from "../../src/auth/Roles"
import { platformSchema } from "../../src/tenancy/migrations/platform"
import { clientFor } from "../support/api"
import { login } from "../support/login"
import { settled } from "../support/apiCaller"
import { baseUrl, freshUser, freshWorkspace, TestApp, testPassword } from "../support/TestApp"
import { sessionCookieOf, signIn } from "../support/http"

const unauthorizedBody = expect.objectContaining({ _tag: "Unauthorized", message: expect.any(String) })

/** `GET /api/auth/me` with a session `cookie` ("" for none) and `headers`: the answer whatever its status. */
const me = (base: string, cookie: string, headers: Record<string, string> = {}) =>
  settled(clientFor(base, cookie, headers).call((api) => api.auth.me()))

layer(TestApp, { excludeTestServices: true })("sign-in, sessions and API keys over HTTP", (it) => {
  it.effect("a member signs in; the cookie is HttpOnly, SameSite=Lax, not Secure over plain HTTP", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace })
      const response = yield* login(base, { workspace: workspace.slug, email: user.email, password: testPassword })
      expect(response.status).toBe(200)
      const setCookie = response.headers.get("set-cookie") ?? ""
      expect(setCookie).toMatch(/^session=[A-Za-z0-9_-]{43};/)
      expect(setCookie).toContain("HttpOnly")
      expect(setCookie).toContain("SameSite=Lax")
      expect(setCookie).not.toContain("Secure")
      const who = yield* me(base, sessionCookieOf(response))
      expect(who.status).toBe(200)
      expect(who.body).toEqual({
        kind: "user",
        id: user.id,
        name: user.name,
        email: user.email,
        workspace: { id: workspace.id, slug: workspace.slug, name: workspace.name }
      })
    })
  )

  it.effect("the cookie is Secure when the request came over HTTPS (through a proxy)", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace })
      const response = yield* login(
        base,
        { workspace: workspace.slug, email: user.email, password: testPassword },
        // The page behind the proxy is an https one: so is the Origin its browser sends.
        { "x-forwarded-proto": "https", origin: base.replace(/^http:/, "https:") }
      )
      expect(response.status).toBe(200)
      expect(response.headers.get("set-cookie")).toContain("Secure")
    })
  )

  it.effect("a wrong password, an unknown email, a foreign workspace: the same 401", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const other = yield* freshWorkspace
      const user = yield* freshUser({ workspace })
      const attempts = [
        { workspace: workspace.slug, email: user.email, password: "wrong password" },
        { workspace: workspace.slug, email: "nobody@example.com", password: testPassword },
        { workspace: other.slug, email: user.email, password: testPassword },
        { workspace: "no-such-workspace", email: user.email, password: testPassword }
      ]
      for (const attempt of attempts) {
        const response = yield* login(base, attempt)
        expect(response.status).toBe(401)
        expect(response.body).toEqual({
          _tag: "Unauthorized",
          message: "wrong workspace, email or password",
          requestId: expect.any(String)
        })
        expect(response.headers.get("set-cookie")).toBeNull()
      }
    })
  )

  it.effect("no credentials, an unknown session and an expired session: 401 with a JSON body", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const sql = yield* SqlClient.SqlClient
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace })
      const none = yield* me(base, "")
      expect(none.status).toBe(401)
      expect(none.body).toEqual(unauthorizedBody)
      const unknown = yield* me(base, "session=not-a-session")
      expect(unknown.status).toBe(401)
      expect(unknown.body).toEqual(unauthorizedBody)

      const used = yield* signIn(base, { workspace: workspace.slug, email: user.email, password: testPassword })
      expect((yield* me(base, used)).status).toBe(200)
      // Expired behind the service's back, so on a session it has not read yet (a cached one ends
      // by its cached expiry: test/auth/auth-caches.test.ts).
      const cookie = yield* signIn(base, { workspace: workspace.slug, email: user.email, password: testPassword })
      yield* sql`UPDATE ${sql(`${platformSchema}.sessions`)} SET expires_at = now() - interval '1 second'
        WHERE user_id = ${user.id}`
      const expired = yield* me(base, cookie)
      expect(expired.status).toBe(401)
      expect(expired.body).toEqual({
        _tag: "Unauthorized",
        message: "the session is unknown or has expired: sign in again",
        requestId: expect.any(String)
      })
    })
  )

  it.effect("the session probe answers 200 signed out too: no cookie, an unknown, an expired or a signed-out one", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const sql = yield* SqlClient.SqlClient
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace })
      const session = (cookie: string) => settled(clientFor(base, cookie).call((api) => api.auth.session()))
      for (const cookie of ["", "session=not-a-session"]) {
        const answer = yield* session(cookie)
        expect([answer.status, answer.body]).toEqual([200, { me: null }])
      }
      const cookie = yield* signIn(base, { workspace: workspace.slug, email: user.email, password: testPassword })
      const signedIn = yield* session(cookie)
      expect(signedIn.status).toBe(200)
      // The same `me` as /auth/me answers.
      expect(signedIn.body).toEqual({ me: (yield* me(base, cookie)).body })
      expect(signedIn.body).toEqual({ me: expect.objectContaining({ id: user.id, name: user.name }) })

      yield* clientFor(base, cookie).call((api) => api.auth.logout())
      expect(yield* session(cookie)).toEqual(expect.objectContaining({ status: 200, body: { me: null } }))
      const other = yield* signIn(base, { workspace: workspace.slug, email: user.email, password: testPassword })
      yield* sql`UPDATE ${sql(`${platformSchema}.sessions`)} SET expires_at = now() - interval '1 second'
        WHERE user_id = ${user.id}`
      expect(yield* session(other)).toEqual(expect.objectContaining({ status: 200, body: { me: null } }))
      // /auth/me still refuses: callers that must be signed in keep their 401.
      expect((yield* me(base, other)).status).toBe(401)
    })
  )

  it.effect("logout ends the session and clears the cookie", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace })
      const cookie = yield* signIn(base, { workspace: workspace.slug, email: user.email, password: testPassword })
      const logout = yield* clientFor(base, cookie).call((api) => api.auth.logout())
      expect(logout.status).toBe(204)
      expect(logout.headers.get("set-cookie")).toMatch(/^session=; Max-Age=0/)
      expect((yield* me(base, cookie)).status).toBe(401)
    })
  )

  it.effect("an API key authenticates as its service account until it is revoked", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const apiKeys = yield* ApiKeys
      const { apiKey, key } = yield* apiKeys.create(workspace, "importer", "admin")
      const authorization = `Bearer ${key}`
      const who = yield* me(base, "", { authorization })
      expect(who.status).toBe(200)
      expect(who.body).toEqual({
        kind: "service-account",
        id: apiKey.id,
        name: "importer",
        workspace: { id: workspace.id, slug: workspace.slug, name: workspace.name }
      })
      const tampered = key.slice(0, -1) + (key.endsWith("A") ? "B" : "A")
      const wrong = yield* me(base, "", { authorization: `Bearer ${tampered}` })
      expect(wrong.status).toBe(401)
      yield* apiKeys.revoke(workspace, apiKey.id)
      const revoked = yield* me(base, "", { authorization })
      expect(revoked.status).toBe(401)
      expect(revoked.body).toEqual({
        _tag: "Unauthorized",
        message: "the API key is invalid or has been revoked",
        requestId: expect.any(String)
      })
    })
  )

  it.effect("a principal without the grant gets 403; with it, 200; unknown business object 404", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const roles = yield* Roles
      yield* roles.grant(workspace, "deal-reader", "crm/deal", "read")
      const reader = yield* freshUser({ workspace, role: "deal-reader" })
      const nobody = yield* freshUser({ workspace })
      const { key } = yield* (yield* ApiKeys).create(workspace, "deal bot", "deal-reader")
      const readerCookie = yield* signIn(base, {
        workspace: workspace.slug,
        email: reader.email,
        password: testPassword
      })
      const nobodyCookie = yield* signIn(base, {
        workspace: workspace.slug,
        email: nobody.email,
        password: testPassword
      })
      const asReader = clientFor(base, readerCookie)
      const asKey = clientFor(base, "", { authorization: `Bearer ${key}` })
      const asNobody = clientFor(base, nobodyCookie)
      const definition = (client: typeof asReader, businessObject: string) =>
        settled(client.call((api) => api.businessObjects.get({ params: { businessObject } })))
      const deal = "crm/deal"
      const company = "crm/company"

      expect((yield* definition(asReader, deal)).status).toBe(200)
      expect((yield* definition(asKey, deal)).status).toBe(200)
      const denied = yield* definition(asReader, company)
      expect(denied.status).toBe(403)
      expect(denied.body).toEqual({
        _tag: "Forbidden",
        message: `user ${reader.name} may not read crm/company`,
        requestId: expect.any(String)
      })
      expect((yield* definition(asKey, company)).status).toBe(403)
      expect((yield* definition(asNobody, deal)).status).toBe(403)
      const unknown = yield* definition(asReader, "crm/nothing")
      expect(unknown.status).toBe(404)
      expect(unknown.body).toEqual({
        _tag: "NotFound",
        message: "unknown business object: crm/nothing",
        requestId: expect.any(String)
      })

      const list = yield* asReader.call((api) => api.businessObjects.list({ headers: {} }))
      expect(list.body).toEqual({
        businessObjects: [expect.objectContaining({ name: "crm/deal" })],
        labels: expect.objectContaining({ actors: expect.any(Object) })
      })
      const none = yield* asNobody.call((api) => api.businessObjects.list({ headers: {} }))
      // No business object to read: no action labels either (the plugins' actor and job labels name no data).
      expect(none.body).toEqual({ businessObjects: [], labels: expect.objectContaining({ actions: {} }) })
    })
  )
})
