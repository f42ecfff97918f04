import { describe, expect, it } from "@effect/vitest"
import { ApiError, createClient, Decimal, VersionConflictError } from "../../src/client"
import { deal } from "./hydration/fixtures"
import type { FetchCall } from "./support/fakes"
import { fakeFetch, json, noContent } from "./support/fakes"

/**
 * The client's side of versions (issue 14), against a fake `fetch`: every
 * write on a record names its version in `If-Match` when asked to, a 412
 * becomes a `VersionConflictError` with the entries since, and the business
 * object definitions are fetched once and revalidated by their ETag.
 */

const stored = {
  id: "r1",
  businessObject: "crm/deal",
  state: "operational",
  version: 3,
  values: { title: "Kiosk" },
  createdAt: "2026-03-01T09:30:00.123456Z",
  updatedAt: "2026-03-01T09:30:00.123456Z"
}
const listed = { businessObjects: [{ name: deal.name, fields: deal.fields, actions: ["close"], mayUpdate: true }] }
const listTag = '"list-v1"'
const since = {
  id: "a2",
  at: "2026-03-01T09:31:00.000001Z",
  actor: { kind: "user", id: "u2", name: "Ada", email: "ada@example.com" },
  correlationId: "c2",
  businessObject: "crm/deal",
  businessObjectId: "r1",
  operation: "updated",
  cause: null,
  changes: { amount: { from: "1.00", to: "2.50" } }
}
const conflictBody = {
  _tag: "PreconditionFailed",
  message: "the crm/deal record r1 is at version 3, not 2: nothing was written",
  currentVersion: 3,
  entries: [since],
  moreEntries: false
}

const path = (call: FetchCall) => new URL(call.url, "http://page.test").pathname
const header = (call: FetchCall, name: string) => new Headers(call.init.headers).get(name)

/** The service: a 412 for any write naming version 2, the list with its ETag and 304 when it is sent back. */
const service = (call: FetchCall): Response => {
  if (path(call) === "/api/business-objects") {
    return header(call, "if-none-match") === listTag
      ? new Response(null, { status: 304, headers: { etag: listTag } })
      : new Response(JSON.stringify(listed), {
          status: 200,
          headers: { "content-type": "application/json", etag: listTag }
        })
  }
  if (path(call).startsWith("/api/audit/")) return json(200, { entries: [since], nextCursor: null })
  if (call.method !== "GET" && header(call, "if-match") === '"2"') return json(412, conflictBody)
  if (call.method === "DELETE") return noContent()
  return json(200, stored)
}

const setup = () => {
  const fake = fakeFetch(service)
  return { client: createClient({ baseUrl: "http://svc.test", fetch: fake.fetch }), calls: fake.calls }
}

describe("If-Match", () => {
  it("every write on one record sends the version it is made on as the record's ETag; none without it", async () => {
    const { client, calls } = setup()
    await client.records.update("crm/deal", "r1", { title: "A" }, { ifMatch: 3 })
    await client.records.remove("crm/deal", "r1", { ifMatch: 3 })
    await client.records.publish("crm/deal", "r1", { ifMatch: 3 })
    await client.records.archive("crm/deal", "r1", { ifMatch: 3 })
    await client.records.restore("crm/deal", "r1", { ifMatch: "*" })
    await client.records.action("crm/deal", "close", "r1", { ifMatch: 3 })
    await client.records.update("crm/deal", "r1", { title: "B" })
    expect(calls.map((call) => [call.method, header(call, "if-match")])).toEqual([
      ["PATCH", '"3"'],
      ["DELETE", '"3"'],
      ["POST", '"3"'],
      ["POST", '"3"'],
      ["POST", "*"],
      ["POST", '"3"'],
      ["PATCH", null]
    ])
  })

  it("a 412 rejects with a VersionConflictError: the current version and the entries since, hydrated", async () => {
    const { client } = setup()
    const refused = await client.records.update("crm/deal", "r1", { title: "A" }, { ifMatch: 2 }).catch((e) => e)
    expect(refused).toBeInstanceOf(VersionConflictError)
    expect(refused).toBeInstanceOf(ApiError)
    if (!(refused instanceof VersionConflictError)) throw refused
    expect(refused.status).toBe(412)
    expect(refused._tag).toBe("PreconditionFailed")
    expect(refused.currentVersion).toBe(3)
    expect(refused.moreEntries).toBe(false)
    expect(refused.entries.map((entry) => entry.id)).toEqual(["a2"])
    expect(refused.entries[0]?.changes?.amount).toEqual({ from: Decimal.parse("1.00"), to: Decimal.parse("2.50") })
    for (const write of [
      client.records.remove("crm/deal", "r1", { ifMatch: 2 }),
      client.records.archive("crm/deal", "r1", { ifMatch: 2 }),
      client.records.action("crm/deal", "close", "r1", { ifMatch: 2 })
    ]) {
      expect(await write.catch((e) => e)).toBeInstanceOf(VersionConflictError)
    }
  })

  it("a 412 whose body is not the contract's stays an ApiError", async () => {
    const fake = fakeFetch(() => json(412, { _tag: "PreconditionFailed", message: "from a proxy" }))
    const client = createClient({ baseUrl: "http://svc.test", fetch: fake.fetch })
    const refused = await client.records.update("crm/deal", "r1", {}, { ifMatch: 2 }).catch((e) => e)
    expect(refused).toBeInstanceOf(ApiError)
    expect(refused).not.toBeInstanceOf(VersionConflictError)
  })
})

describe("business object definitions", () => {
  it("are fetched once for every timeline page, and revalidated by ETag: an unchanged list is a 304", async () => {
    const { client, calls } = setup()
    for (let i = 0; i < 3; i++) await client.audit.timeline("crm/deal", "r1")
    const lists = () => calls.filter((call) => path(call) === "/api/business-objects")
    expect(lists()).toHaveLength(1)
    expect(header(lists()[0] as FetchCall, "if-none-match")).toBeNull()

    const again = await client.businessObjects()
    expect(again.map((one) => [one.name, one.mayUpdate, one.actions])).toEqual([["crm/deal", true, ["close"]]])
    expect(lists()).toHaveLength(2)
    expect(header(lists()[1] as FetchCall, "if-none-match")).toBe(listTag)
    await client.audit.timeline("crm/deal", "r1")
    expect(lists()).toHaveLength(2)
  })

  it("a timeline of a business object the kept list does not name revalidates it first", async () => {
    const { client, calls } = setup()
    await client.businessObjects()
    await client.audit.timeline("crm/company", "c1")
    const lists = calls.filter((call) => path(call) === "/api/business-objects")
    expect(lists.map((call) => header(call, "if-none-match"))).toEqual([null, listTag])
  })
})
