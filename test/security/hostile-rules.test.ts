import * as http from "node:http"
import { describe, expect, it } from "vitest"
import { freshUser, testPassword } from "../support/TestApp"
import { prototypeNames } from "./support/arbitraries"
import { changedTables, schemaChecksum } from "./support/checksum"
import { fixtureForFile } from "./support/fixture"
import type { Fixture } from "./support/fixture"
import { answersLikeUnknownName, maxErrorBodyBytes, maxMessageLength, unknownName } from "./support/oracles"
import { endpointRoutes, stateChanging } from "./support/routes"
import type { Route } from "./support/routes"
import type { Sent, ValidRequest } from "./support/validRequests"
import { credentialHeaders, jsonRequest, send, validRequestFor } from "./support/validRequests"

/**
 * The rules of issue 11, each broken alone: every other part of the request
 * is one the route accepts (a control request proves it), so the answer can
 * only be about the one thing that is wrong. Routes are read from the API
 * definition; a new body route or state-changing route fails here until
 * validRequests.ts knows a request it accepts.
 */

const current = fixtureForFile()

const routes = endpointRoutes()

/** Sends `request` and fails, naming `rule`, unless the answer is `status` with a short JSON error and nothing in the workspace changed. */
const expectRefused = async (rule: string, status: number | ReadonlyArray<number>, request: Sent) => {
  const f = current()
  const before = await f.run(schemaChecksum(f.workspace.schema))
  const response = await send(f, request)
  const after = await f.run(schemaChecksum(f.workspace.schema))
  const what = `${rule}: ${request.method} ${request.path.slice(0, 100)} (content-type ${JSON.stringify(request.headers?.["content-type"])}, origin ${JSON.stringify(request.headers?.origin)})`
  const allowed = typeof status === "number" ? [status] : status
  expect(allowed, `${what} answered ${response.status} ${response.body.toString("utf8").slice(0, 300)}`).toContain(
    response.status
  )
  expect(response.json, `${what}: the error body`).toEqual(
    expect.objectContaining({ _tag: expect.any(String), message: expect.any(String) })
  )
  const message = (response.json as { message: string }).message
  expect(message.length, `${what}: message length`).toBeLessThanOrEqual(maxMessageLength)
  expect(response.body.length, `${what}: error body size`).toBeLessThanOrEqual(maxErrorBodyBytes)
  expect(changedTables(before, after), `${what}: tables changed by a ${response.status}`).toEqual([])
  expect(response.headers.get("set-cookie"), `${what}: a refused request sets no cookie`).toBeUndefined()
  return response
}

const expectAccepted = async (rule: string, request: Sent) => {
  const response = await send(current(), request)
  expect(
    response.status,
    `${rule} (control): ${request.method} ${request.path} answered ${response.status} ${response.body.toString("utf8").slice(0, 300)}`
  ).toBeLessThan(300)
  expect(response.status).toBeGreaterThanOrEqual(200)
  return response
}

/** A valid request for the route, or a failure saying where to add one. */
const validFor = async (route: Route): Promise<ValidRequest> => {
  const valid = await validRequestFor(current(), route, testPassword)
  if (valid === undefined) {
    throw new Error(
      `${route.key} (${route.method} ${route.path}) is new: add a request it accepts to test/security/support/validRequests.ts`
    )
  }
  return valid
}

/** `value` with its first string replaced by `by` (a JSON text spliced in as is). */
const spliceFirstString = (value: unknown, by: string): string => {
  const marker = "\u0001SPLICE\u0001"
  let done = false
  const walk = (inner: unknown): unknown => {
    if (done) return inner
    if (typeof inner === "string") {
      done = true
      return marker
    }
    if (Array.isArray(inner)) return inner.map(walk)
    if (typeof inner === "object" && inner !== null)
      return Object.fromEntries(Object.entries(inner).map(([key, v]) => [key, walk(v)]))
    return inner
  }
  const text = JSON.stringify(walk(value))
  if (!done) throw new Error(`no string in ${text}`)
  return text.replace(JSON.stringify(marker), by)
}

const formOf = (value: unknown) =>
  Object.entries(value as Record<string, unknown>)
    .map(
      ([key, inner]) =>
        `${encodeURIComponent(key)}=${encodeURIComponent(typeof inner === "string" ? inner : JSON.stringify(inner))}`
    )
    .join("&")

const multipartOf = (value: unknown) =>
  `${Object.entries(value as Record<string, unknown>)
    .map(
      ([key, inner]) =>
        `--rulesboundary\r\nContent-Disposition: form-data; name="${key}"\r\n\r\n${typeof inner === "string" ? inner : JSON.stringify(inner)}\r\n`
    )
    .join("")}--rulesboundary--\r\n`

const bodyRoutes = routes.filter((route) => route.hasPayload)

describe("JSON bodies: 400 for what is not JSON, 415 for other media types, 413 over the limit", () => {
  for (const route of bodyRoutes) {
    it(`${route.key}: ${route.method} ${route.path}`, { timeout: 120_000 }, async () => {
      const f = current()
      const valid = await validFor(route)
      const headers = credentialHeaders(f, valid.credential)
      const json = { ...headers, "content-type": "application/json" }
      const text = JSON.stringify(valid.json)
      const at = { method: valid.method, path: valid.path }

      await expectRefused("malformed JSON is a 400", 400, { ...at, headers: json, body: text.slice(0, -1) })
      await expectRefused("malformed JSON is a 400", 400, { ...at, headers: json, body: `${text}}` })
      await expectRefused("a NUL character is a 400", 400, {
        ...at,
        headers: json,
        body: spliceFirstString(valid.json, '"a\\u0000b"')
      })
      await expectRefused("a lone surrogate is a 400", 400, {
        ...at,
        headers: json,
        body: spliceFirstString(valid.json, '"a\\ud800b"')
      })
      await expectRefused("nesting deeper than 64 is a 400", 400, {
        ...at,
        headers: json,
        body: spliceFirstString(valid.json, `${"[".repeat(65)}${"]".repeat(65)}`)
      })
      await expectRefused("nesting deeper than 64 is a 400", 400, {
        ...at,
        headers: json,
        body: spliceFirstString(valid.json, `${'{"a":'.repeat(100)}1${"}".repeat(100)}`)
      })
      for (const [contentType, body] of [
        ["text/plain", text],
        ["text/plain;charset=UTF-8", text],
        ["application/x-www-form-urlencoded", formOf(valid.json)],
        ["multipart/form-data; boundary=rulesboundary", multipartOf(valid.json)],
        ["application/xml", "<values/>"]
      ] as const) {
        await expectRefused("a body route takes JSON only: 415", 415, {
          ...at,
          headers: { ...headers, "content-type": contentType },
          body
        })
      }
      await expectRefused("a body over the limit is a 413", 413, {
        ...at,
        headers: json,
        body: spliceFirstString(valid.json, JSON.stringify("x".repeat(16 * 1024 * 1024)))
      })
      // The very request, well-formed: accepted. So each refusal above was about its one defect.
      await expectAccepted(`${route.key} accepts the request the rules broke`, jsonRequest(valid, json))
    })
  }
})

const foreignOrigins = (f: Fixture) =>
  [
    ["a foreign site", "http://evil.example"],
    ["an opaque origin", "null"],
    ["the same site on another port", "http://127.0.0.1:1"],
    ["an origin that starts like the service's", `${f.origin}.evil.example`]
  ] as const

const originRoutes = routes.filter(
  (route) => route.key === "auth.login" || (route.authenticated && stateChanging(route.method))
)

describe("Origin: a cookie-authenticated change and a sign-in from another origin are 403", () => {
  for (const route of originRoutes) {
    it(`${route.key}: ${route.method} ${route.path}`, { timeout: 120_000 }, async () => {
      const f = current()
      for (const [which, origin] of foreignOrigins(f)) {
        const valid = await validFor(route)
        const cookie = valid.cookie ?? (route.key === "auth.logout" ? await f.newAdminSession() : f.adminCookie)
        const headers = { ...credentialHeaders(f, valid.credential, cookie), origin }
        await expectRefused(`a request from ${which} is a 403`, 403, jsonRequest(valid, headers))
        if (route.key === "auth.logout" || route.key === "auth.logoutEverywhere") {
          const me = await send(f, { method: "GET", path: "/api/auth/me", headers: { cookie } })
          expect(me.status, "a refused sign-out leaves the session alive").toBe(200)
        }
      }
      // Control: the page's own origin is accepted. (Whether a cookie request with no Origin at all is, is the edge's call.)
      const valid = await validFor(route)
      const cookie = valid.cookie ?? (route.key === "auth.logout" ? await f.newAdminSession() : f.adminCookie)
      await expectAccepted(
        `${route.key} with its own Origin`,
        jsonRequest(valid, credentialHeaders(f, valid.credential, cookie))
      )
    })
  }

  it("an API key is no ambient credential: another Origin does not stop it", async () => {
    const f = current()
    const response = await send(f, {
      method: "POST",
      path: "/api/records/crm/company",
      headers: {
        authorization: `Bearer ${f.apiKey}`,
        origin: "http://evil.example",
        "content-type": "application/json"
      },
      body: JSON.stringify({ values: { name: "By key" } })
    })
    expect(response.status, response.body.toString("utf8")).toBe(201)
  })
})

/** Path parameters naming something that must exist, with the value each takes when right. */
const rightValue = (f: Fixture, param: string): string | undefined =>
  ({
    namespace: "crm",
    name: "company",
    id: f.ids.company,
    action: "close",
    businessObject: "crm%2Fcompany",
    workspace: f.workspace.slug,
    editor: "editor-rules",
    conversationId: "conversation-rules"
  })[param]

const namingRoutes = routes.filter((route) =>
  route.params.some((param) => ["namespace", "name", "id", "action", "businessObject", "workspace"].includes(param))
)

describe("prototype names: constructor, __proto__, toString, hasOwnProperty name nothing", () => {
  for (const route of namingRoutes) {
    it(`${route.key}: ${route.method} ${route.path}`, { timeout: 120_000 }, async () => {
      const f = current()
      const credential = route.key === "engine.writes" ? "engine" : "cookie"
      const valid = await validRequestFor(f, route, testPassword)
      const body = valid?.json === undefined ? undefined : JSON.stringify(valid.json)
      const headers = {
        ...credentialHeaders(f, credential),
        ...(body === undefined ? {} : { "content-type": "application/json" })
      }
      for (const param of route.params.filter((name) =>
        ["namespace", "name", "id", "action", "businessObject", "workspace"].includes(name)
      )) {
        const pathWith = (value: string) =>
          route.path.replace(/:([A-Za-z]+)/g, (_, name: string) =>
            name === param ? value : (rightValue(f, name) ?? "x")
          )
        const unknown = await send(f, {
          method: route.method,
          path: pathWith(unknownName),
          headers,
          ...(body === undefined ? {} : { body })
        })
        // The timeline of a record id nobody has is an empty page (a deleted record keeps its timeline), and leaving
        // one may be a no-op (a tab closing on a record deleted meanwhile); everything else is a 4xx.
        if (!(param === "id" && ["audit.timeline", "presence.leave"].includes(route.key))) {
          expect(
            unknown.status,
            `${route.key}: the unknown name ${unknownName} as ${param} answered ${unknown.status}`
          ).toBeGreaterThanOrEqual(400)
          expect(unknown.status).toBeLessThan(500)
        }
        const statuses = [unknown.status, 400, 404].filter(
          (status, at, all) => all.indexOf(status) === at && answersLikeUnknownName(status, unknown.status)
        )
        for (const name of prototypeNames.slice(0, 4)) {
          const rule = `prototype-name: ${param} = ${name} answers like the unknown name ${unknownName} (${unknown.status})`
          await expectRefusedOrSame(rule, statuses, {
            method: route.method,
            path: pathWith(name),
            headers,
            ...(body === undefined ? {} : { body })
          })
        }
      }
    })
  }

  for (const [key, method, path] of [
    ["records.create", "POST", "/api/records/crm/company"],
    ["records.update", "PATCH", "/api/records/crm/company/:id"]
  ] as const) {
    it(`${key}: a field named after an Object.prototype member is an unknown field (400)`, async () => {
      const f = current()
      const target = path.replace(":id", f.ids.company)
      const headers = { ...credentialHeaders(f, "cookie"), "content-type": "application/json" }
      for (const name of prototypeNames.slice(0, 4)) {
        const body = `{"values":{"name":"Field test",${JSON.stringify(name)}:"x"}}`
        await expectRefused(`prototype-name: the field ${name} is unknown`, 400, {
          method,
          path: target,
          headers,
          body
        })
      }
    })
  }
})

/** For a 2xx twin (the timeline), the same 2xx; for a 4xx twin, that 4xx with nothing changed. */
const expectRefusedOrSame = async (rule: string, statuses: ReadonlyArray<number>, request: Sent) => {
  if ((statuses[0] ?? 0) < 300) {
    const response = await send(current(), request)
    expect(statuses, `${rule}: ${request.method} ${request.path} answered ${response.status}`).toContain(
      response.status
    )
    return
  }
  await expectRefused(rule, statuses, request)
}

describe("presence on a record that does not exist", () => {
  it("a heartbeat is 404 (a leave may be a no-op or a 404), and nobody shows as its editor", async () => {
    const f = current()
    const missing = "5f0c6f5e-0000-4000-8000-00000000f023"
    const path = `/api/presence/crm/company/${missing}/editor-rules`
    await expectRefused("presence-missing-record: 404", 404, {
      method: "PUT",
      path,
      headers: credentialHeaders(f, "cookie")
    })
    const leave = await send(f, { method: "DELETE", path, headers: credentialHeaders(f, "cookie") })
    expect([204, 404], `leaving a record no one has answered ${leave.status}`).toContain(leave.status)
    const list = await send(f, {
      method: "GET",
      path: "/api/presence/crm/company",
      headers: credentialHeaders(f, "cookie")
    })
    expect(list.status).toBe(200)
    expect(JSON.stringify(list.json)).not.toContain(missing)
  })
})

describe("the page's headers and the API document", () => {
  it("the web page carries a Content-Security-Policy without unsafe-eval", async () => {
    const page = await send(current(), { method: "GET", path: "/" })
    expect(page.status).toBe(200)
    const policy = page.headers.get("content-security-policy") ?? ""
    expect(policy, "content-security-policy on /").not.toBe("")
    expect(policy).not.toContain("unsafe-eval")
  })

  it("the engine's route is not in the OpenAPI document or the docs", async () => {
    const f = current()
    const document = await send(f, { method: "GET", path: "/api/openapi.json" })
    expect(document.status).toBe(200)
    const paths = Object.keys((document.json as { paths?: Record<string, unknown> }).paths ?? {})
    expect(paths.length).toBeGreaterThan(10)
    expect(paths.filter((path) => path.includes("/engine"))).toEqual([])
  })
})

describe("sign-in throttling", () => {
  it("repeated wrong passwords for one account end in 429 with Retry-After, and no session", {
    timeout: 120_000
  }, async () => {
    const f = current()
    const user = await f.run(freshUser({ workspace: f.workspace, role: "admin" }))
    const attempt = () =>
      send(f, {
        method: "POST",
        path: "/api/auth/login",
        headers: { origin: f.origin, "content-type": "application/json" },
        body: JSON.stringify({ workspace: f.workspace.slug, email: user.email, password: "wrong password" })
      })
    const statuses: Array<number> = []
    for (let tries = 0; tries < 40; tries++) {
      const response = await attempt()
      statuses.push(response.status)
      if (response.status === 429) {
        const retryAfter = Number(response.headers.get("retry-after"))
        expect(
          Number.isInteger(retryAfter) && retryAfter > 0,
          `Retry-After ${response.headers.get("retry-after")}`
        ).toBe(true)
        expect(response.json).toEqual(expect.objectContaining({ _tag: "TooManyRequests", retryAfter }))
        expect(response.headers.get("set-cookie")).toBeUndefined()
        return
      }
      expect(response.status, `attempt ${tries + 1}`).toBe(401)
    }
    throw new Error(
      `throttle: 40 wrong passwords in a row for one account were never throttled (statuses ${statuses.join(",")})`
    )
  })
})

describe("broadcast streams per session", () => {
  it("opening many streams with one session closes the oldest", { timeout: 60_000 }, async () => {
    const f = current()
    const cookie = await f.newAdminSession()
    const opened: Array<{ readonly request: http.ClientRequest; readonly ended: Promise<void> }> = []
    try {
      for (let n = 0; n < 32; n++) {
        const request = http.request({
          host: "127.0.0.1",
          port: f.port,
          path: "/api/broadcast",
          headers: { cookie, accept: "text/event-stream" }
        })
        const ended = new Promise<void>((resolve, reject) => {
          request.on("response", (response) => {
            if (response.statusCode !== 200) reject(new Error(`stream ${n}: ${response.statusCode}`))
            response.on("data", () => {})
            response.on("end", () => resolve())
            response.on("close", () => resolve())
          })
          request.on("error", () => resolve())
        })
        request.end()
        opened.push({ request, ended })
      }
      const first = opened[0]
      if (first === undefined) throw new Error("no stream")
      const outcome = await Promise.race([
        first.ended.then(() => "closed"),
        new Promise((resolve) => setTimeout(() => resolve("open"), 20_000))
      ])
      expect(outcome, "stream-cap: the oldest of 32 streams of one session is closed").toBe("closed")
    } finally {
      for (const { request } of opened) request.destroy()
    }
  })
})
