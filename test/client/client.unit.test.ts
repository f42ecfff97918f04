import { afterEach, beforeEach, describe, expect, expectTypeOf, it, vi } from "@effect/vitest"
import { ApiError, createClient, Decimal, HydrationError, PlainDate, ResponseShapeError } from "../../src/client"
import type { BroadcastData, EventSourceConstructor } from "../../src/client"
import { deal } from "./hydration/fixtures"
import type { FetchCall } from "./support/fakes"
import { fakeFetch, FakeEventSource, json, noContent } from "./support/fakes"
import { me } from "./fixtures"

/**
 * The client against a fake `fetch` and `EventSource` (the browser
 * boundary): what it sends, how it decodes, how it fails. The same calls
 * against the real service are in client.test.ts.
 */

// The browser's own EventSource fits the option (checked by the compiler).
expectTypeOf<typeof EventSource>().toExtend<EventSourceConstructor>()

const storedRecord = (values: Record<string, unknown>) => ({
  id: "r1",
  businessObject: "crm/deal",
  state: "operational",
  version: 1,
  values,
  createdAt: "2026-03-01T09:30:00.123456Z",
  updatedAt: "2026-03-01T09:30:00.123456Z"
})
const auditRow = {
  id: "a1",
  at: "2026-03-01T09:30:00.123456Z",
  actor: { kind: "user", id: "u1", name: "Ann", email: "ann@example.com" },
  correlationId: "c1",
  businessObject: "crm/deal",
  businessObjectId: "r1",
  operation: "updated",
  cause: null,
  changes: { amount: { from: "1.00", to: "2.50" }, closeDate: { from: null, to: "2026-04-01" } }
}
const definitions = { businessObjects: [{ name: deal.name, fields: deal.fields, actions: [], mayUpdate: true }] }

/** Answers like the service for the routes these tests use. */
const service = (call: FetchCall): Response => {
  const path = new URL(call.url, "http://page.test").pathname
  if (path === "/api/auth/login" || path === "/api/auth/me") return json(200, me)
  if (path === "/api/business-objects") return json(200, definitions)
  if (path.startsWith("/api/audit/")) return json(200, { entries: [auditRow], nextCursor: "opaque" })
  if (path.startsWith("/api/presence/") && call.method === "GET")
    return json(200, { records: { r1: [{ id: "form-1", name: "Ann", userId: "u-ann" }] } })
  if (call.method === "DELETE" || call.method === "PUT" || path === "/api/auth/logout") return noContent()
  if (path === "/api/records/crm/deal" && call.method === "GET")
    return json(200, { records: [storedRecord({ title: "Kiosk" })] })
  return json(call.method === "POST" && path === "/api/records/crm/deal" ? 201 : 200, storedRecord({ title: "Kiosk" }))
}

const setup = (answer: (call: FetchCall) => Response | Promise<Response> = service) => {
  const fake = fakeFetch(answer)
  const client = createClient({ baseUrl: "http://svc.test/", fetch: fake.fetch, EventSource: FakeEventSource })
  return { client, calls: fake.calls }
}

describe("client requests", () => {
  it("every call sends the session cookie (credentials: include) to baseUrl, JSON bodies with their content type", async () => {
    const { client, calls } = setup()
    await client.auth.login({ workspace: "acme", email: "ann@example.com", password: "s3cret" })
    await client.auth.me()
    await client.records.update("crm/deal", "r1", { title: "Kiosk" })
    expect(calls.map((c) => c.init.credentials)).toEqual(["include", "include", "include"])
    expect(calls.map((c) => `${c.method} ${c.url}`)).toEqual([
      "POST http://svc.test/api/auth/login",
      "GET http://svc.test/api/auth/me",
      "PATCH http://svc.test/api/records/crm/deal/r1"
    ])
    expect(new Headers(calls[0]?.init.headers).get("content-type")).toBe("application/json")
    expect(new Headers(calls[1]?.init.headers).get("content-type")).toBeNull()
    // Nothing else: no trace headers, which would make a cross-origin call preflighted.
    expect([...new Headers(calls[1]?.init.headers).keys()]).toEqual(["accept"])
  })

  it("login sends {workspace, email, password} (the SignIn schema, password in clear on the wire) and decodes Me", async () => {
    const { client, calls } = setup()
    const who = await client.auth.login({ workspace: "acme", email: "ann@example.com", password: "s3cret" })
    expect(calls[0]?.body).toEqual({ workspace: "acme", email: "ann@example.com", password: "s3cret" })
    expect(who).toMatchObject({ kind: "user", name: "Ann", workspace: { slug: "acme" } })
    await expect(client.auth.logout()).resolves.toBeUndefined()
    expect(calls[1]?.method).toBe("POST")
  })

  it("records: the business object as two path segments, odd ids encoded, create {values, draft}, lifecycle and action routes", async () => {
    const { client, calls } = setup()
    expect(await client.records.list("crm/deal", { limit: 5 })).toHaveLength(1)
    await client.records.get("crm/deal", "a/b c")
    await client.records.create("crm/deal", { title: "Kiosk" })
    await client.records.create("crm/deal", { title: "Draft" }, { draft: true })
    await client.records.remove("crm/deal", "r1")
    await client.records.publish("crm/deal", "r1")
    await client.records.archive("crm/deal", "r1")
    await client.records.restore("crm/deal", "r1")
    await client.records.action("crm/deal", "close", "r1")
    expect(calls.map((c) => `${c.method} ${c.url.replace("http://svc.test", "")}`)).toEqual([
      "GET /api/records/crm/deal?limit=5",
      "GET /api/records/crm/deal/a%2Fb%20c",
      "POST /api/records/crm/deal",
      "POST /api/records/crm/deal",
      "DELETE /api/records/crm/deal/r1",
      "POST /api/records/crm/deal/r1/publish",
      "POST /api/records/crm/deal/r1/archive",
      "POST /api/records/crm/deal/r1/restore",
      "POST /api/actions/crm/deal/close"
    ])
    expect(calls[2]?.body).toEqual({ values: { title: "Kiosk" }, draft: false })
    expect(calls[3]?.body).toEqual({ values: { title: "Draft" }, draft: true })
    expect(calls[8]?.body).toEqual({ id: "r1" })
    await expect(client.records.list("deal")).rejects.toThrow(TypeError)
    await expect(client.presence.heartbeat("deal", "r1", "form-1")).rejects.toThrow(TypeError)
    // A limit outside the contract's range is refused before anything is sent.
    const sent = calls.length
    await expect(client.records.list("crm/deal", { limit: 501 })).rejects.toThrow(/between 1 and 500/)
    await expect(client.audit.timeline("crm/deal", "r1", { limit: 0 })).rejects.toThrow(TypeError)
    expect(calls.filter((c) => !c.url.endsWith("/api/business-objects"))).toHaveLength(sent)
  })

  it("values may be hydrated: Decimal, PlainDate and Date go out in wire form", async () => {
    const { client, calls } = setup()
    await client.records.update("crm/deal", "r1", {
      amount: Decimal.parse("1350.00"),
      closeDate: PlainDate.parse("2026-04-30"),
      closedAt: new Date("2026-04-30T10:00:00Z"),
      lineItems: [{ id: "l1", price: Decimal.parse("9.90") }],
      title: null
    })
    expect(calls[0]?.body).toEqual({
      values: {
        amount: "1350.00",
        closeDate: "2026-04-30",
        closedAt: "2026-04-30T10:00:00.000Z",
        lineItems: [{ id: "l1", price: "9.90" }],
        title: null
      }
    })
  })

  it("without a fetch option, the global fetch is used, looked up at call time", async () => {
    const fake = fakeFetch(service)
    const client = createClient({ baseUrl: "http://svc.test" })
    vi.stubGlobal("fetch", fake.fetch)
    try {
      await client.auth.me()
      expect(fake.calls.map((c) => c.url)).toEqual(["http://svc.test/api/auth/me"])
    } finally {
      vi.unstubAllGlobals()
    }
  })
})

describe("client errors", () => {
  it("a non-2xx answer is an ApiError with the status, _tag and message of the body {_tag, message}", async () => {
    const { client } = setup(() => json(404, { _tag: "NotFound", message: "no record r9 of crm/deal" }))
    const error = await client.records.get("crm/deal", "r9").catch((e: unknown) => e)
    expect(error).toBeInstanceOf(ApiError)
    expect(error).toMatchObject({ status: 404, _tag: "NotFound", message: "no record r9 of crm/deal" })
  })

  it("a 400 keeps the whole body (HttpApiDecodeError issues); a body not in the error shape is UnexpectedResponse", async () => {
    const body = { _tag: "HttpApiDecodeError", message: "bad limit", issues: [{ path: ["limit"] }] }
    const bad = await setup(() => json(400, body))
      .client.records.list("crm/deal")
      .catch((e: unknown) => e)
    expect(bad).toMatchObject({ status: 400, _tag: "HttpApiDecodeError", body })
    const proxy = await setup(
      () => new Response("<html>Bad gateway</html>", { status: 502, statusText: "Bad Gateway" })
    )
      .client.auth.me()
      .catch((e: unknown) => e)
    expect(proxy).toBeInstanceOf(ApiError)
    expect(proxy).toMatchObject({
      status: 502,
      _tag: "UnexpectedResponse",
      message: "502 Bad Gateway",
      body: "<html>Bad gateway</html>"
    })
  })

  it("a 2xx answer of the wrong shape fails loudly with ResponseShapeError naming the call and the schema's complaint", async () => {
    const wrong = await setup(() => json(200, { id: 1 }))
      .client.records.get("crm/deal", "r1")
      .catch((e: unknown) => e)
    expect(wrong).toBeInstanceOf(ResponseShapeError)
    expect((wrong as ResponseShapeError).message).toContain("GET http://svc.test/api/records/crm/deal/r1")
    expect((wrong as ResponseShapeError).issues).toContain("StoredRecord")
    const notJson = await setup(() => new Response("ok", { status: 200 }))
      .client.auth.me()
      .catch((e: unknown) => e)
    expect(notJson).toBeInstanceOf(ResponseShapeError)
    const badRow = await setup((call) =>
      call.url.includes("/api/audit/")
        ? json(200, { entries: [{ ...auditRow, operation: "renamed" }], nextCursor: null })
        : service(call)
    )
      .client.audit.timeline("crm/deal", "r1")
      .catch((e: unknown) => e)
    expect(badRow).toBeInstanceOf(ResponseShapeError)
  })
})

describe("client retries of writes (Idempotency-Key)", () => {
  afterEach(() => vi.useRealTimers())

  const keyOf = (call: FetchCall | undefined) => new Headers(call?.init.headers).get("idempotency-key")
  const unavailable = (retryAfter?: string) =>
    new Response(JSON.stringify({ _tag: "ServiceUnavailable", message: "database unavailable", retryAfter: 1 }), {
      status: 503,
      headers: retryAfter === undefined ? {} : { "retry-after": retryAfter }
    })
  /** Answers with `answers` in turn (a thrown error is a rejected fetch), then like the service. */
  const scripted =
    (...answers: Array<Response | Error>) =>
    (call: FetchCall) => {
      const next = answers.shift()
      if (next instanceof Error) throw next
      return next ?? service(call)
    }

  it("every record write sends a new Idempotency-Key; reads, sign-in and presence send none", async () => {
    const { client, calls } = setup()
    await client.records.create("crm/deal", { title: "Kiosk" })
    await client.records.update("crm/deal", "r1", { title: "Kiosk" })
    await client.records.remove("crm/deal", "r1")
    await client.records.publish("crm/deal", "r1")
    await client.records.archive("crm/deal", "r1")
    await client.records.restore("crm/deal", "r1")
    await client.records.action("crm/deal", "close", "r1")
    const keys = calls.map(keyOf)
    expect(keys.every((key) => key !== null && /^[0-9a-f]{32}$/.test(key))).toBe(true)
    expect(new Set(keys).size).toBe(7)

    await client.records.get("crm/deal", "r1")
    await client.records.list("crm/deal")
    await client.auth.login({ workspace: "acme", email: "ann@example.com", password: "s3cret" })
    await client.presence.heartbeat("crm/deal", "r1", "form-1")
    expect(calls.slice(7).map(keyOf)).toEqual([null, null, null, null])
  })

  it("a network fault (fetch rejects) sends the same request with the same key again", async () => {
    vi.useFakeTimers()
    const { client, calls } = setup(scripted(new TypeError("fetch failed")))
    const created = client.records.create("crm/deal", { title: "Kiosk" })
    await vi.advanceTimersByTimeAsync(249)
    expect(calls).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(await created).toMatchObject({ id: "r1" })
    expect(calls).toHaveLength(2)
    expect(keyOf(calls[1])).toBe(keyOf(calls[0]))
    expect(calls[1]?.init.body).toBe(calls[0]?.init.body)
    expect(calls[1]?.url).toBe(calls[0]?.url)
  })

  it("a 503 is retried after its Retry-After (seconds or a date), capped by retry.maxDelayMs", async () => {
    vi.useFakeTimers()
    const { client, calls } = setup(scripted(unavailable("2")))
    const updated = client.records.update("crm/deal", "r1", { title: "Kiosk" })
    await vi.advanceTimersByTimeAsync(1_999)
    expect(calls).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    await expect(updated).resolves.toMatchObject({ id: "r1" })
    expect(keyOf(calls[1])).toBe(keyOf(calls[0]))

    const fake = fakeFetch(scripted(unavailable("3600"), unavailable(new Date(Date.now() + 60_000).toUTCString())))
    const capped = createClient({ baseUrl: "http://svc.test", fetch: fake.fetch, retry: { maxDelayMs: 1_000 } })
    const removed = capped.records.remove("crm/deal", "r1")
    await vi.advanceTimersByTimeAsync(999)
    expect(fake.calls).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(fake.calls).toHaveLength(2)
    await vi.advanceTimersByTimeAsync(1_000)
    await expect(removed).resolves.toBeUndefined()
    expect(fake.calls.map(keyOf)).toEqual([keyOf(fake.calls[0]), keyOf(fake.calls[0]), keyOf(fake.calls[0])])
  })

  it("gives up after 3 attempts (retry.attempts), with the last answer or fault", async () => {
    // Retry-After: 0 means no wait at all.
    const { client, calls } = setup(scripted(unavailable("0"), unavailable("0"), unavailable("0"), unavailable("0")))
    expect(await client.records.create("crm/deal", { title: "Kiosk" }).catch((e: unknown) => e)).toMatchObject({
      status: 503,
      _tag: "ServiceUnavailable"
    })
    expect(calls).toHaveLength(3)

    vi.useFakeTimers()
    const fault = new TypeError("fetch failed")
    const offline = setup(scripted(fault, fault, fault))
    const lost = offline.client.records.archive("crm/deal", "r1").catch((e: unknown) => e)
    await vi.advanceTimersByTimeAsync(250 + 500)
    expect(await lost).toBe(fault)
    expect(offline.calls).toHaveLength(3)

    const once = fakeFetch(scripted(unavailable("0")))
    const noRetry = createClient({ baseUrl: "http://svc.test", fetch: once.fetch, retry: { attempts: 1 } })
    expect(await noRetry.records.restore("crm/deal", "r1").catch((e: unknown) => e)).toMatchObject({ status: 503 })
    expect(once.calls).toHaveLength(1)
  })

  it("never retries another error (4xx, 500, 502), nor a read (TanStack Query retries those)", async () => {
    for (const status of [400, 409, 422, 429, 500, 502]) {
      const { client, calls } = setup(() => json(status, { _tag: "Whatever", message: "no" }))
      expect(await client.records.create("crm/deal", { title: "Kiosk" }).catch((e: unknown) => e)).toMatchObject({
        status
      })
      expect(calls, String(status)).toHaveLength(1)
    }
    const { client, calls } = setup(scripted(unavailable("0")))
    expect(await client.records.get("crm/deal", "r1").catch((e: unknown) => e)).toMatchObject({ status: 503 })
    expect(calls).toHaveLength(1)
  })
})

describe("client.audit.timeline", () => {
  it("fetches a page and the current definitions, returns the hydrated rows and the page's nextCursor", async () => {
    const { client, calls } = setup()
    const page = await client.audit.timeline("crm/deal", "r1", { limit: 20 })
    expect(calls.map((c) => c.url.replace("http://svc.test", "")).sort()).toEqual([
      "/api/audit/business-object/crm%2Fdeal/r1?limit=20",
      "/api/business-objects"
    ])
    expect(page.nextCursor).toBe("opaque")
    expect(page.entries).toHaveLength(1)
    expect(page.entries[0]?.changes).toEqual({
      amount: { from: Decimal.parse("1.00"), to: Decimal.parse("2.50") },
      closeDate: { from: null, to: PlainDate.parse("2026-04-01") }
    })
  })

  it("asks for the contract's default page (50) without a limit, and for the page after `cursor` with one", async () => {
    const { client, calls } = setup()
    await client.audit.timeline("crm/deal", "r1")
    await client.audit.timeline("crm/deal", "r1", { limit: 5, cursor: "a b/c" })
    const pages = calls.filter((c) => c.url.includes("/api/audit/")).map((c) => c.url.replace("http://svc.test", ""))
    expect(pages).toEqual([
      "/api/audit/business-object/crm%2Fdeal/r1?limit=50",
      "/api/audit/business-object/crm%2Fdeal/r1?cursor=a+b%2Fc&limit=5"
    ])
  })

  it("rejects with HydrationError when a field's kind changed; an unknown business object passes through raw", async () => {
    const changedKind = {
      businessObjects: [{ name: "crm/deal", fields: { amount: { kind: "number" } }, actions: [], mayUpdate: true }]
    }
    const broken = await setup((call) =>
      call.url.endsWith("/api/business-objects") ? json(200, changedKind) : service(call)
    )
      .client.audit.timeline("crm/deal", "r1")
      .catch((e: unknown) => e)
    expect(broken).toBeInstanceOf(HydrationError)
    expect(broken).toMatchObject({ fieldPath: "amount", expectedKind: "number", found: "string" })

    const unknown = await setup((call) =>
      call.url.endsWith("/api/business-objects") ? json(200, { businessObjects: [] }) : service(call)
    ).client.audit.timeline("crm/deal", "r1")
    expect(unknown.entries[0]?.changes).toEqual(auditRow.changes)
  })
})

describe("client.presence", () => {
  it("heartbeat is a PUT, leave a DELETE sent with keepalive, on /api/presence/:ns/:name/:id/:editor; list gives editors by record", async () => {
    const { client, calls } = setup()
    await expect(client.presence.heartbeat("crm/deal", "r1", "form-1")).resolves.toBeUndefined()
    await expect(client.presence.leave("crm/deal", "r1", "form-1")).resolves.toBeUndefined()
    expect(await client.presence.list("crm/deal")).toEqual({ r1: [{ id: "form-1", name: "Ann", userId: "u-ann" }] })
    expect(
      calls.map((c) => `${c.method} ${c.url.replace("http://svc.test", "")} keepalive=${String(c.init.keepalive)}`)
    ).toEqual([
      "PUT /api/presence/crm/deal/r1/form-1 keepalive=undefined",
      "DELETE /api/presence/crm/deal/r1/form-1 keepalive=true",
      "GET /api/presence/crm/deal keepalive=undefined"
    ])
  })
})

describe("client.broadcast", () => {
  beforeEach(() => FakeEventSource.reset())
  afterEach(() => vi.useRealTimers())

  const hint = (businessObjectId: string): BroadcastData => ({ businessObject: "crm/deal", businessObjectId })

  it("opens an EventSource on /api/broadcast with credentials; on(type) gets decoded data of that type only", () => {
    const { client } = setup()
    const stream = client.broadcast.open()
    const source = FakeEventSource.instances[0]
    expect(source?.url).toBe("http://svc.test/api/broadcast")
    expect(source?.withCredentials).toBe(true)
    const changed: Array<BroadcastData> = []
    const presence: Array<BroadcastData> = []
    stream.on("changed", (data) => changed.push(data))
    stream.on("presence", (data) => presence.push(data))
    source?.open()
    source?.emit("changed", hint("r1"))
    source?.emit("presence", hint("r2"))
    expect(changed).toEqual([hint("r1")])
    expect(presence).toEqual([hint("r2")])
    stream.close()
  })

  it("on() returns the function that removes that listener only; close() ends the stream and drops every handler", () => {
    const { client } = setup()
    const stream = client.broadcast.open()
    const source = FakeEventSource.instances[0]
    const a: Array<string> = []
    const b: Array<string> = []
    const offA = stream.on("changed", (data) => a.push(data.businessObjectId))
    stream.on("changed", (data) => b.push(data.businessObjectId))
    source?.emit("changed", hint("r1"))
    offA()
    offA()
    source?.emit("changed", hint("r2"))
    expect(a).toEqual(["r1"])
    expect(b).toEqual(["r1", "r2"])
    stream.close()
    expect(source?.readyState).toBe(2)
    source?.emit("changed", hint("r3"))
    expect(b).toEqual(["r1", "r2"])
  })

  it("data that does not decode with the Broadcast schema goes to onError, not to the handlers; a throwing handler does not stop the others", () => {
    const { client } = setup()
    const errors: Array<unknown> = []
    const stream = client.broadcast.open({ onError: (error) => errors.push(error) })
    const source = FakeEventSource.instances[0]
    const seen: Array<string> = []
    stream.on("changed", () => {
      throw new Error("handler bug")
    })
    stream.on("changed", (data) => seen.push(data.businessObjectId))
    source?.emit("changed", { businessObject: "crm/deal" })
    source?.emit("changed", "not json")
    expect(seen).toEqual([])
    expect(errors).toHaveLength(2)
    expect(errors.every((e) => e instanceof ResponseShapeError)).toBe(true)
    source?.emit("changed", hint("r1"))
    expect(seen).toEqual(["r1"])
    expect(errors[2]).toMatchObject({ message: "handler bug" })
    stream.close()
  })
})
