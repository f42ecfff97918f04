import { expect, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { HttpApiDecodeError } from "../../src/api/errors"
import type { Client } from "../support/api"
import { createRecord, expectStatus, signedInMember } from "../support/api"
import { chunked, rawExchange, repeatedBytes, requestHead } from "../support/rawHttp"
import { baseUrl, freshWorkspace, TestApp, testEngineToken } from "../support/TestApp"
import { request } from "../support/http"
import type { TestResponse } from "../support/http"

/**
 * Hostile bodies at the edge (docs/security.md, "Request bodies"): each one
 * answered with a short 4xx, nothing read beyond the limit, nothing changed.
 */

const mib = 1024 * 1024

/** How many records of `crm/company` the workspace holds and how many timeline rows: "nothing changed" is both equal. */
const stateOf = (client: Client) =>
  Effect.gen(function* () {
    const companies = expectStatus(200)(yield* client.get("/api/records/crm/company?limit=500")) as {
      records: Array<unknown>
    }
    return { companies: companies.records.length }
  })

/** A signed-in member, a company to patch and act on, and the state before anything hostile. */
const setup = Effect.gen(function* () {
  const base = yield* baseUrl
  const workspace = yield* freshWorkspace
  const { client, cookie } = yield* signedInMember(base, workspace)
  const company = yield* createRecord(client, "crm/company", { name: "Acme", wonDeals: 0 })
  const deal = yield* createRecord(client, "crm/deal", { title: "Kiosk", stage: "open", company: company.id })
  return { base, workspace, client, cookie, company, deal }
})

/** Every route that takes a JSON body, with a body it would accept. */
const bodyRoutes = (s: Effect.Success<typeof setup>) => [
  {
    method: "POST",
    path: "/api/auth/login",
    body: { workspace: s.workspace.slug, email: "x@example.com", password: "x" }
  },
  { method: "POST", path: "/api/records/crm/company", body: { values: { name: "Evil" } } },
  { method: "PATCH", path: `/api/records/crm/company/${s.company.id}`, body: { values: { name: "Evil" } } },
  { method: "POST", path: "/api/actions/crm/deal/close", body: { id: s.deal.id } },
  {
    method: "POST",
    path: "/api/conversations/c-1/tool-calls",
    body: { agent: "a", calls: [{ op: "create", businessObject: "crm/company", values: { name: "Evil" } }] }
  }
]

/** Routes that take no body: a body sent anyway is bounded all the same. */
const bodylessRoutes = (s: Effect.Success<typeof setup>) => [
  { method: "PUT", path: `/api/presence/crm/company/${s.company.id}/tab-1` },
  { method: "POST", path: `/api/records/crm/company/${s.company.id}/archive` },
  { method: "POST", path: "/api/auth/logout" }
]

const expectShortRefusal = (response: TestResponse, status: number, tag: string, input?: string, max = 300) => {
  expect(response.status, JSON.stringify(response.body).slice(0, 300)).toBe(status)
  const body = response.body as { _tag: string; message: string }
  expect(body._tag).toBe(tag)
  expect(body.message.length).toBeLessThan(max)
  if (input !== undefined) expect(JSON.stringify(response.body)).not.toContain(input)
}

layer(TestApp, { excludeTestServices: true })("request bodies at the edge", (it) => {
  it.effect("413 by Content-Length: answered before a byte of the body is read, the connection closed", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const before = yield* stateOf(s.client)
      for (const { method, path } of bodyRoutes(s)) {
        const head = requestHead(method, s.base, path, {
          "content-type": "application/json",
          "content-length": String(100 * mib),
          cookie: s.cookie,
          origin: s.base
        })
        // No body is sent at all: the server answers on the header alone.
        const answer = yield* rawExchange(s.base, head)
        expect(answer.status, path).toBe(413)
        expect(answer.closed, path).toBe(true)
        expect(answer.head.toLowerCase(), path).toContain("connection: close")
        expect(JSON.parse(answer.body), path).toEqual({
          _tag: "PayloadTooLarge",
          message: `the body is over this route's limit of ${path === "/api/auth/login" ? 16384 : mib} bytes`,
          requestId: expect.any(String)
        })
      }
      expect(yield* stateOf(s.client)).toEqual(before)
    })
  )

  it.effect(
    "413 by streamed bytes (chunked, no Content-Length): reading stops at the limit and the connection is closed",
    () =>
      Effect.gen(function* () {
        const s = yield* setup
        const before = yield* stateOf(s.client)
        for (const { method, path } of [...bodyRoutes(s), ...bodylessRoutes(s)]) {
          const head = requestHead(method, s.base, path, {
            "content-type": "application/json",
            "transfer-encoding": "chunked",
            cookie: s.cookie,
            origin: s.base
          })
          // 64 MiB offered in 64 KiB chunks; the server stops reading after 1 MiB and closes.
          const answer = yield* rawExchange(s.base, head, chunked(repeatedBytes(64 * 1024, 1024)))
          expect(answer.status, path).toBe(413)
          expect(answer.closed, path).toBe(true)
          expect(answer.sent, path).toBeLessThan(64 * mib)
        }
        expect(yield* stateOf(s.client)).toEqual(before)
        // Not archived, not signed out.
        expect(expectStatus(200)(yield* s.client.get(`/api/records/crm/company/${s.company.id}`))).toMatchObject({
          state: "operational"
        })
      })
  )

  it.effect("415 for a form, multipart, text/plain or missing content type on every JSON route", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const before = yield* stateOf(s.client)
      const routes = [
        ...bodyRoutes(s).map((route) => ({ ...route, headers: { cookie: s.cookie } })),
        {
          method: "POST",
          path: `/api/engine/workspaces/${s.workspace.slug}/writes`,
          body: {},
          headers: { authorization: `Bearer ${testEngineToken}` }
        }
      ]
      const types = ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain", undefined]
      for (const { method, path, body, headers } of routes) {
        for (const type of types) {
          const response = yield* request(`${s.base}${path}`, {
            method,
            headers: type === undefined ? headers : { ...headers, "content-type": type },
            // Bytes, not a string: fetch adds no content type of its own.
            body: new TextEncoder().encode(JSON.stringify(body))
          })
          expectShortRefusal(response, 415, "UnsupportedMediaType")
        }
      }
      // A route without a body refuses a body of another type too (an HTML form cannot post to it).
      const archive = yield* request(`${s.base}/api/records/crm/company/${s.company.id}/archive`, {
        method: "POST",
        headers: { cookie: s.cookie, "content-type": "text/plain" },
        body: "x"
      })
      expectShortRefusal(archive, 415, "UnsupportedMediaType")
      expect(yield* stateOf(s.client)).toEqual(before)
      // ...and takes no body, or an empty JSON one, as before.
      expectStatus(200)(yield* s.client.post(`/api/records/crm/company/${s.company.id}/archive`))
    })
  )

  it.effect(
    "400 for malformed JSON, NUL, lone surrogates (values and keys), bad UTF-8 and deep nesting; short, no echo",
    () =>
      Effect.gen(function* () {
        const s = yield* setup
        const before = yield* stateOf(s.client)
        const junk = "q".repeat(5000)
        const cases: Array<{
          readonly body: string | Uint8Array<ArrayBuffer>
          readonly says: RegExp
          readonly input?: string
        }> = [
          { body: `{"values": {"name": "${junk}`, says: /not valid JSON: Unterminated string/, input: junk },
          { body: `${junk}`, says: /not valid JSON: Unexpected token 'q'/, input: junk.slice(0, 60) },
          { body: `{"values": {"name": "a\\u0000b"}}`, says: /^body\.values\.name contains a NUL character/ },
          { body: `{"values": {"na\\u0000me": "a"}}`, says: /^the key "na\\u0000me" in body\.values contains a NUL/ },
          { body: `{"values": {"name": "a\\ud800b"}}`, says: /^body\.values\.name contains a lone UTF-16 surrogate/ },
          {
            body: `{"values": {"name": ["x", "\\udfff"]}}`,
            says: /^body\.values\.name\[1\] contains a lone UTF-16 surrogate/
          },
          { body: `{"values": {"\\ud800": 1}}`, says: /^the key "\\ud800" in body\.values contains a lone/ },
          { body: new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), says: /^the body is not valid UTF-8$/ },
          { body: `${"[".repeat(65)}${"]".repeat(65)}`, says: /deeper than 64 levels \(at character 64\)/ },
          { body: `{"values": ${"[".repeat(10_000)}${"]".repeat(10_000)}}`, says: /deeper than 64 levels/ },
          { body: `{"values": ${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`, says: /deeper than 64 levels/ },
          { body: "", says: /^the body is empty/ }
        ]
        for (const { body, says, input } of cases) {
          const response = yield* request(`${s.base}/api/records/crm/company`, {
            method: "POST",
            headers: { cookie: s.cookie, "content-type": "application/json" },
            body
          })
          expectShortRefusal(response, 400, "BadRequest", input)
          expect((response.body as { message: string }).message).toMatch(says)
        }
        // A paired surrogate (an emoji) and 64 levels are fine: the values are then checked as usual.
        expectStatus(201)(yield* s.client.post("/api/records/crm/company", { values: { name: "Acme \ud83d\ude80" } }))
        const deep = yield* request(`${s.base}/api/records/crm/company`, {
          method: "POST",
          headers: { cookie: s.cookie, "content-type": "application/json" },
          body: `{"values": {"name": ${"[".repeat(62)}${"]".repeat(62)}}}`
        })
        expect(deep.status).toBe(400)
        expect((deep.body as { message: string }).message).toMatch(/^invalid values for crm\/company: name: /)
        expect((yield* stateOf(s.client)).companies).toBe(before.companies + 1)
      })
  )

  it.effect(
    "a request the route's schemas refuse answers the contract's HttpApiDecodeError, each issue with its kind",
    () =>
      Effect.gen(function* () {
        const s = yield* setup
        const before = yield* stateOf(s.client)
        const decodeError = Schema.decodeUnknownSync(HttpApiDecodeError)
        const refusal = (response: TestResponse) => {
          expect(response.status).toBe(400)
          return decodeError(response.body)
        }
        const wrongType = refusal(yield* s.client.post("/api/records/crm/company", { values: {}, draft: "yes" }))
        expect(wrongType.issues).toContainEqual(expect.objectContaining({ _tag: "Type", path: ["draft"] }))
        const missing = refusal(yield* s.client.post("/api/records/crm/company", { draft: false }))
        expect(missing.issues).toContainEqual(expect.objectContaining({ _tag: "Missing", path: ["values"] }))
        const query = refusal(yield* s.client.get("/api/records/crm/company?limit=many"))
        expect(query.issues.map((issue) => issue.path)).toContainEqual(["limit"])
        expect(yield* stateOf(s.client)).toEqual(before)
      })
  )

  it.effect("a value the schema refuses is named briefly: the error quotes no more than a short prefix of it", () =>
    Effect.gen(function* () {
      const s = yield* setup
      const before = yield* stateOf(s.client)
      const junk = "z".repeat(200_000)
      const decode = yield* s.client.post("/api/records/crm/company", { values: {}, draft: junk })
      expect(decode.status).toBe(400)
      expect((decode.body as { _tag: string })._tag).toBe("HttpApiDecodeError")
      expect(JSON.stringify(decode.body).length).toBeLessThan(2000)
      expect(JSON.stringify(decode.body)).not.toContain("z".repeat(300))
      const values = yield* s.client.post("/api/records/crm/company", { values: { wonDeals: junk, [junk]: 1 } })
      expectShortRefusal(values, 400, "BadRequest", undefined, 1100)
      expect(JSON.stringify(values.body)).not.toContain("z".repeat(300))
      expect(yield* stateOf(s.client)).toEqual(before)
    })
  )
})
