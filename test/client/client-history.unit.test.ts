import { describe, expect, it } from "@effect/vitest"
import { ApiError, ChangedSinceError, createClient, RecordAsOf, VersionConflictError } from "../../src/client"
import type { FetchCall } from "./support/fakes"
import { fakeFetch, json } from "./support/fakes"

/**
 * The client's side of history (docs/history.md), against a fake `fetch`:
 * `records.asOf` asks with `?asOf=` and decodes the record as it was,
 * `records.get` never takes one for the record; `records.revert` sends its
 * body, `If-Match` and a key, and a 409 `ChangedSince` becomes a
 * `ChangedSinceError` naming the fields.
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
const asOf = {
  id: "r1",
  businessObject: "crm/deal",
  state: "archived",
  version: 2,
  values: { title: "Pilot" },
  entry: {
    id: "0190a3b4-0000-7000-8000-0000000000e2",
    at: "2026-03-01T09:31:00.000001Z",
    actor: { kind: "system", name: "seeder:crm" }
  }
}
const changedSince = {
  _tag: "ChangedSince",
  message:
    "cannot undo entry 0190a3b4-0000-7000-8000-0000000000e2: amount changed again since; send force: true to overwrite it",
  fields: ["amount"]
}

const e1 = "0190a3b4-0000-7000-8000-0000000000e1"
const e2 = "0190a3b4-0000-7000-8000-0000000000e2"
const url = (call: FetchCall) => new URL(call.url, "http://page.test")
const header = (call: FetchCall, name: string) => new Headers(call.init.headers).get(name)

const service = (call: FetchCall): Response => {
  const { pathname, searchParams } = url(call)
  if (call.method === "GET") return json(200, searchParams.has("asOf") ? asOf : stored)
  if (pathname.endsWith("/revert")) {
    const force = typeof call.body === "object" && call.body !== null && "force" in call.body && call.body.force
    if (header(call, "if-match") === '"2"') {
      return json(412, {
        _tag: "PreconditionFailed",
        message: "stale",
        currentVersion: 3,
        entries: [],
        moreEntries: false
      })
    }
    return force === true ? json(200, stored) : json(409, changedSince)
  }
  return json(404, { _tag: "NotFound", message: "no route" })
}

const fallbackCall: FetchCall = { url: "http://svc.test/", path: "/", method: "GET", init: {}, body: undefined }

const setup = () => {
  const fake = fakeFetch(service)
  return { client: createClient({ baseUrl: "http://svc.test", fetch: fake.fetch }), calls: fake.calls }
}

describe("records.asOf", () => {
  it("asks with asOf (an entry id, an instant, a Date) and decodes the record as it was", async () => {
    const { client, calls } = setup()
    const record = await client.records.asOf("crm/deal", "r1", e2)
    expect(record).toBeInstanceOf(RecordAsOf)
    expect([record.state, record.values, record.entry.id]).toEqual(["archived", { title: "Pilot" }, e2])
    await client.records.asOf("crm/deal", "r1", new Date("2026-03-01T09:31:00Z"))
    await client.records.asOf("crm/deal", "r1", "2026-03-01T10:31:00+01:00")
    expect(calls.map((call) => url(call).searchParams.get("asOf"))).toEqual([
      e2,
      "2026-03-01T09:31:00.000Z",
      "2026-03-01T10:31:00+01:00"
    ])
    expect(url(calls[0] ?? calls[1] ?? fallbackCall).pathname).toBe("/api/records/crm/deal/r1")
  })

  it("records.get sends no asOf and answers the record", async () => {
    const { client, calls } = setup()
    expect((await client.records.get("crm/deal", "r1")).version).toBe(3)
    expect(calls[0]?.path).toBe("/api/records/crm/deal/r1")
  })
})

describe("records.revert", () => {
  it("sends the entry, mode and force with If-Match and an Idempotency-Key; a 409 ChangedSince names the fields", async () => {
    const { client, calls } = setup()
    const refused = await client.records
      .revert("crm/deal", "r1", { entry: e2, mode: "undo" }, { ifMatch: 3 })
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(ChangedSinceError)
    expect(refused).toBeInstanceOf(ApiError)
    expect(refused instanceof ChangedSinceError ? [refused.status, refused.fields, refused.message] : []).toEqual([
      409,
      ["amount"],
      changedSince.message
    ])
    const done = await client.records.revert("crm/deal", "r1", { entry: e2, mode: "undo", force: true }, { ifMatch: 3 })
    expect(done.version).toBe(3)
    expect(calls.map((call) => [call.method, url(call).pathname, header(call, "if-match"), call.body])).toEqual([
      ["POST", "/api/records/crm/deal/r1/revert", '"3"', { entry: e2, mode: "undo", force: false }],
      ["POST", "/api/records/crm/deal/r1/revert", '"3"', { entry: e2, mode: "undo", force: true }]
    ])
    expect(calls.every((call) => (header(call, "idempotency-key") ?? "").length > 0)).toBe(true)
  })

  it("a stale If-Match is a VersionConflictError, as on every write", async () => {
    const { client } = setup()
    const refused = await client.records
      .revert("crm/deal", "r1", { entry: e1, mode: "restore" }, { ifMatch: 2 })
      .catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(VersionConflictError)
  })
})
