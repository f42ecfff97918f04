import { afterEach, describe, expect, it, vi } from "@effect/vitest"
import { createClient } from "../../src/client"
import type { FetchCall } from "./support/fakes"
import { fakeFetch, json } from "./support/fakes"

/**
 * Read-your-writes (docs/client.md, "Reading your own writes"): the client
 * keeps the highest `X-Commit-LSN` its service's answers carried and sends it
 * on every later request to that service, against a fake `fetch`. Each test
 * uses a service URL of its own: the positions are kept per service for the
 * whole page.
 */

const storedRecord = (title: string) => ({
  id: "r1",
  businessObject: "crm/deal",
  state: "operational",
  version: 1,
  values: { title },
  createdAt: "2026-03-01T09:30:00.123456Z",
  updatedAt: "2026-03-01T09:30:00.123456Z"
})

/** A service whose writes answer with the positions given, in turn; reads carry none. */
const service = (positions: Array<string>) => (call: FetchCall) => {
  const response = json(200, storedRecord("Kiosk"))
  const lsn = call.method === "PATCH" ? positions.shift() : undefined
  if (lsn !== undefined) response.headers.set("x-commit-lsn", lsn)
  return response
}

const sent = (call: FetchCall | undefined) => new Headers(call?.init.headers).get("x-commit-lsn")

let services = 0
const serviceUrl = () => `http://svc-${++services}.test`

afterEach(() => vi.unstubAllGlobals())

describe("the commit position", () => {
  it("is sent on every request after a write answered with one, the highest seen (LSNs compared as numbers)", async () => {
    const fake = fakeFetch(service(["0/9A", "0/1F0", "0/1EF"]))
    const client = createClient({ baseUrl: serviceUrl(), fetch: fake.fetch })
    await client.records.get("crm/deal", "r1")
    await client.records.update("crm/deal", "r1", { title: "a" })
    await client.records.get("crm/deal", "r1")
    await client.records.update("crm/deal", "r1", { title: "b" })
    await client.records.update("crm/deal", "r1", { title: "c" })
    await client.records.list("crm/deal").catch(() => undefined)
    expect(fake.calls.map((call) => `${call.method} ${sent(call)}`)).toEqual([
      "GET null",
      "PATCH null",
      "GET 0/9A",
      "PATCH 0/9A",
      "PATCH 0/1F0",
      "GET 0/1F0"
    ])
  })

  it("is kept per service, for every client of the page: another service gets none", async () => {
    const first = serviceUrl()
    const fakeA = fakeFetch(service(["1/0"]))
    await createClient({ baseUrl: first, fetch: fakeA.fetch }).records.update("crm/deal", "r1", { title: "a" })
    const again = fakeFetch(service([]))
    await createClient({ baseUrl: `${first}/`, fetch: again.fetch }).records.get("crm/deal", "r1")
    const other = fakeFetch(service([]))
    await createClient({ baseUrl: serviceUrl(), fetch: other.fetch }).records.get("crm/deal", "r1")
    expect(sent(again.calls[0])).toBe("1/0")
    expect(sent(other.calls[0])).toBeNull()
  })

  it("never sends one to a service that answers none (no replica), nor keeps what is no LSN", async () => {
    const fake = fakeFetch(service(["not-a-position"]))
    const client = createClient({ baseUrl: serviceUrl(), fetch: fake.fetch })
    await client.records.update("crm/deal", "r1", { title: "a" })
    await client.records.update("crm/deal", "r1", { title: "b" })
    await client.records.get("crm/deal", "r1")
    expect(fake.calls.map(sent)).toEqual([null, null, null])
  })

  it("in a browser, survives a reload (and reaches other tabs) through localStorage", async () => {
    const stored = new Map<string, string>()
    vi.stubGlobal("document", {})
    vi.stubGlobal("localStorage", {
      getItem: (key: string) => stored.get(key) ?? null,
      setItem: (key: string, value: string) => void stored.set(key, value)
    })
    const base = serviceUrl()
    const before = fakeFetch(service(["2/A0"]))
    await createClient({ baseUrl: base, fetch: before.fetch }).records.update("crm/deal", "r1", { title: "a" })
    // A reload: the page's modules start afresh, only the storage is left.
    vi.resetModules()
    const reloaded = await import("../../src/client")
    const after = fakeFetch(service([]))
    await reloaded.createClient({ baseUrl: base, fetch: after.fetch }).records.get("crm/deal", "r1")
    expect(sent(after.calls[0])).toBe("2/A0")
  })
})
