import { describe, expect, it } from "vitest"
import { testPassword } from "../support/TestApp"
import { changedTables, schemaChecksum } from "./support/checksum"
import { fixtureForFile } from "./support/fixture"
import type { Fixture } from "./support/fixture"
import { endpointRoutes } from "./support/routes"
import type { Route } from "./support/routes"
import type { Sent, ValidRequest } from "./support/validRequests"
import { credentialHeaders, jsonRequest, send, validRequestFor } from "./support/validRequests"

/**
 * A path parameter gets the checks a body's strings get (docs/security.md,
 * "Request paths"): percent-decoded, it may hold no NUL (PostgreSQL's text
 * refuses it; before the check a NUL reached the database and answered 500).
 * For every parameter of every route of the API definition (read from it,
 * so a new route is covered here without touching this file), a request the
 * route accepts is sent with that one parameter made hostile: the answer is
 * a 400 `BadRequest` naming the parameter, and nothing in the workspace
 * changed. A lone surrogate cannot even be percent-encoded as UTF-8: such a
 * segment is a malformed path, refused as a 4xx too.
 */

const current = fixtureForFile()

const withNul = ["%00", "a%00b", "%00%00", `${"x".repeat(50)}%00`]
/** A lone surrogate (`\ud800`) as UTF-8 bytes: not valid UTF-8, so it never decodes to a string. */
const loneSurrogate = "%ED%A0%80"

const segmentsOf = (path: string) => path.split("/")

/**
 * A request the route accepts: the one validRequests.ts knows for a
 * state-changing route, else (a read) the route's path on the fixture's
 * records, as the admin.
 */
const acceptedRequest = async (f: Fixture, route: Route): Promise<ValidRequest> => {
  const valid = await validRequestFor(f, route, testPassword)
  if (valid !== undefined) return valid
  const values: Record<string, string> = {
    namespace: "crm",
    name: "company",
    businessObject: "crm%2Fcompany",
    id: f.ids.company,
    editor: "editor-paths",
    workspace: f.workspace.slug
  }
  const path = route.path.replace(/:([A-Za-z]+)/g, (_, param: string) => values[param] ?? "x")
  return { method: route.method, path, json: undefined, credential: "cookie" }
}

/** `valid` with the segment of parameter `param` replaced by `raw` (already percent-encoded). */
const withParam = (route: Route, valid: ValidRequest, param: string, raw: string): ValidRequest => {
  const [pathOnly = "", query] = valid.path.split("?")
  const template = segmentsOf(route.path)
  const segments = segmentsOf(pathOnly)
  const at = template.indexOf(`:${param}`)
  if (at === -1 || segments.length !== template.length)
    throw new Error(`${route.key}: cannot place ${param} in ${valid.path}`)
  segments[at] = raw
  return { ...valid, path: `${segments.join("/")}${query === undefined ? "" : `?${query}`}` }
}

const sentFor = (f: Fixture, valid: ValidRequest): Sent =>
  jsonRequest(valid, credentialHeaders(f, valid.credential, valid.cookie ?? f.adminCookie))

const routes = endpointRoutes().filter((route) => route.params.length > 0)

describe("path parameters: a NUL is refused on every route, before anything is read or written (PostgreSQL, Redis)", () => {
  it("covers the routes with path parameters", () => {
    expect(routes.length).toBeGreaterThan(10)
  })

  for (const route of routes) {
    it(`${route.key}: ${route.method} ${route.path}`, { timeout: 60_000 }, async () => {
      const f = current()
      for (const param of route.params) {
        for (const raw of withNul) {
          const request = withParam(route, await acceptedRequest(f, route), param, raw)
          const what = `${route.key} ${param}=${raw.slice(0, 20)}: ${request.method} ${request.path.slice(0, 120)}`
          const before = await f.run(schemaChecksum(f.workspace.schema))
          const response = await send(f, sentFor(f, request))
          const after = await f.run(schemaChecksum(f.workspace.schema))
          expect(response.status, `${what} answered ${response.body.toString("utf8").slice(0, 300)}`).toBe(400)
          expect(response.json, what).toEqual(
            expect.objectContaining({
              _tag: "BadRequest",
              message: expect.stringContaining(`path parameter ${param} `),
              requestId: expect.any(String)
            })
          )
          expect((response.json as { message: string }).message, what).toContain("NUL")
          expect(changedTables(before, after), `${what}: tables changed`).toEqual([])
        }
        const request = withParam(route, await acceptedRequest(f, route), param, loneSurrogate)
        const what = `${route.key} ${param}=${loneSurrogate}: ${request.method} ${request.path.slice(0, 120)}`
        const before = await f.run(schemaChecksum(f.workspace.schema))
        const response = await send(f, sentFor(f, request))
        const after = await f.run(schemaChecksum(f.workspace.schema))
        expect([400, 404], `${what} answered ${response.status}`).toContain(response.status)
        expect(response.json, what).toEqual(
          expect.objectContaining({ _tag: expect.any(String), message: expect.any(String) })
        )
        expect(changedTables(before, after), `${what}: tables changed`).toEqual([])
      }
    })
  }

  it("the audit timeline of a NUL id is a 400, not the database's error (the reported case)", async () => {
    const f = current()
    for (const id of ["%00", "a%00b"]) {
      const response = await send(f, {
        method: "GET",
        path: `/api/audit/business-object/crm%2Fcompany/${id}`,
        headers: credentialHeaders(f, "cookie")
      })
      expect(response.status).toBe(400)
      expect(response.json).toEqual(
        expect.objectContaining({
          _tag: "BadRequest",
          message: `the path parameter id (${JSON.stringify(decodeURIComponent(id))}) contains a NUL character (\\u0000)`
        })
      )
    }
  })

  it("a NUL anywhere in a path, outside the API's routes too, is a 400", async () => {
    const f = current()
    for (const path of ["/records/crm/deal/a%00b", "/api/no-such-route/%00", "/assets/%00.js"]) {
      const response = await send(f, { method: "GET", path })
      expect(response.status, path).toBe(400)
      expect(response.json, path).toEqual(
        expect.objectContaining({ _tag: "BadRequest", message: expect.stringContaining("NUL") })
      )
    }
  })
})
