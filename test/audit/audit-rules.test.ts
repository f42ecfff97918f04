import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Roles } from "../../src/auth/Roles"
import { baseUrl, freshWorkspace, TestApp } from "../support/TestApp"
import type { AuditEntry } from "../../src/api/AuditEntry"
import { bearerClient, createRecord, recordsOf, signedInMember, timelineCall, timelineOf } from "../support/api"
import { refusal } from "../support/apiCaller"

const deal = "crm/deal"
const keysOf = (entry: AuditEntry) => Object.keys(entry).sort()
// `titles`: the titles a row names, added by the read (docs/titles.md).
const base = [
  "actor",
  "at",
  "businessObject",
  "businessObjectId",
  "cause",
  "correlationId",
  "id",
  "operation",
  "titles"
]

layer(TestApp, { excludeTestServices: true })("audit rows through the records API", (it) => {
  it.effect("rule 1: each verb carries only what it determines, no null padding", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client, user } = yield* signedInMember(yield* baseUrl, workspace)
      const created = yield* createRecord(client, deal, { title: "Kiosk", stage: "open", amount: "1200.00" })
      const deals = recordsOf(client, deal)
      yield* deals.update(created.id, { stage: "proposal" })
      yield* deals.archive(created.id)
      yield* deals.restore(created.id)
      yield* deals.remove(created.id)
      // timelineOf checks the wire body is the contract's shape exactly (nothing more, no null padding).
      const { entries } = yield* timelineOf(client, deal, created.id)
      expect(entries.map((e) => e.operation)).toEqual(["deleted", "restored", "archived", "updated", "created"])
      const [deleted, restored, archived, updated, born] = entries
      if (!deleted || !restored || !archived || !updated || !born) throw new Error("missing rows")
      expect(keysOf(born)).toEqual([...base, "record"].sort())
      expect(born.record).toEqual({ title: "Kiosk", stage: "open", amount: "1200.00" })
      expect(keysOf(updated)).toEqual([...base, "changes"].sort())
      expect(updated.changes).toEqual({ stage: { from: "open", to: "proposal" } })
      expect(keysOf(archived)).toEqual(base.slice().sort())
      expect(keysOf(restored)).toEqual(base.slice().sort())
      expect(keysOf(deleted)).toEqual([...base, "record"].sort())
      expect(deleted.record).toEqual({ title: "Kiosk", stage: "proposal", amount: "1200.00" })
      for (const entry of entries) {
        expect(entry.actor).toEqual({ kind: "user", id: user.id, name: user.name, email: user.email })
        expect(entry.cause).toBeNull()
        expect(entry.businessObject).toBe(deal)
        expect(entry.businessObjectId).toBe(created.id)
        expect(entry.id).not.toBe(created.id)
        expect(entry.at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/)
      }
      // Five units: five correlation ids, five transaction timestamps.
      expect(new Set(entries.map((e) => e.correlationId)).size).toBe(5)
      expect(new Set(entries.map((e) => e.at)).size).toBe(5)
    })
  )

  it.effect("rule 2: an update that changes nothing writes no row", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const created = yield* createRecord(client, deal, {
        title: "Same",
        address: { street: "Main 1", city: "Oslo" },
        lineItems: [{ id: "a", product: "p", quantity: 1, price: "2.50" }]
      })
      // The same values again, key order shuffled, an explicit null for an absent field.
      const same = yield* recordsOf(client, deal).update(created.id, {
        lineItems: [{ price: "2.50", quantity: 1, product: "p", id: "a" }],
        address: { city: "Oslo", street: "Main 1", country: null },
        title: "Same",
        stage: null
      })
      expect(same.body).toMatchObject({ values: created.values })
      const { entries } = yield* timelineOf(client, deal, created.id)
      expect(entries.map((e) => e.operation)).toEqual(["created"])
    })
  )

  it.effect("rule 3: a draft writes no rows until published; deleting a draft leaves nothing", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const draft = yield* createRecord(client, deal, { title: "Draft" }, true)
      expect(draft.state).toBe("draft")
      const deals = recordsOf(client, deal)
      yield* deals.update(draft.id, { title: "Draft 2", stage: "open" })
      expect((yield* timelineOf(client, deal, draft.id)).entries).toEqual([])
      const published = (yield* deals.publish(draft.id)).body
      expect(published.state).toBe("operational")
      const { entries } = yield* timelineOf(client, deal, draft.id)
      expect(entries.map((e) => e.operation)).toEqual(["created"])
      expect(entries[0]?.record).toEqual({ title: "Draft 2", stage: "open" })

      const neverLive = yield* createRecord(client, deal, { title: "Gone" }, true)
      yield* deals.remove(neverLive.id)
      expect((yield* timelineOf(client, deal, neverLive.id)).entries).toEqual([])
      expect((yield* refusal(deals.get(neverLive.id))).status).toBe(404)
    })
  )

  it.effect("rules 4, 5, 8: an action's cascade A -> B -> C shares one unit; each cause names its parent", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client, user } = yield* signedInMember(yield* baseUrl, workspace)
      const company = yield* createRecord(client, "crm/company", { name: "Acme", wonDeals: 2 })
      const opened = yield* createRecord(client, deal, { title: "Big one", stage: "negotiation", company: company.id })
      const closed = (yield* recordsOf(client, deal).action("close", opened.id)).body
      expect(closed.values.stage).toBe("won")

      const [a] = (yield* timelineOf(client, deal, opened.id)).entries
      const [b] = (yield* timelineOf(client, "crm/company", company.id)).entries
      const activities = (yield* recordsOf(client, "crm/activity").list()).body
      expect(activities.records).toHaveLength(1)
      const activity = activities.records[0]
      if (!activity) throw new Error("no activity")
      expect(activity.values).toEqual({ subject: "Acme has won 3 deals", company: company.id, deal: opened.id })
      const [c] = (yield* timelineOf(client, "crm/activity", activity.id)).entries
      if (!a || !b || !c) throw new Error("missing rows")

      expect(a).toMatchObject({ operation: "updated", changes: { stage: { from: "negotiation", to: "won" } } })
      expect(a.cause).toEqual({ kind: "action", action: "crm/deal/close" })
      expect(b).toMatchObject({ operation: "updated", changes: { wonDeals: { from: 2, to: 3 } } })
      expect(b.cause).toEqual({
        kind: "event",
        businessObject: deal,
        businessObjectId: opened.id,
        operation: "updated"
      })
      expect(c).toMatchObject({ operation: "created", record: activity.values })
      expect(c.cause).toEqual({
        kind: "event",
        businessObject: "crm/company",
        businessObjectId: company.id,
        operation: "updated"
      })

      for (const row of [a, b, c])
        expect(row.actor).toEqual({ kind: "user", id: user.id, name: user.name, email: user.email })
      expect(new Set([a, b, c].map((row) => row.correlationId)).size).toBe(1)
      expect(new Set([a, b, c].map((row) => row.at)).size).toBe(1)
      // The unit that created the deal is another one.
      const [, born] = (yield* timelineOf(client, deal, opened.id)).entries
      expect(born?.correlationId).not.toBe(a.correlationId)
      expect(born?.at).not.toBe(a.at)
    })
  )

  it.effect("an API key writes as its service account", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const { apiKey, key } = yield* (yield* ApiKeys).create(workspace, "importer", "admin")
      const response = yield* recordsOf(bearerClient(base, key), "crm/company").create({ name: "Imported" })
      expect(response.status).toBe(201)
      const [row] = (yield* timelineOf(client, "crm/company", response.body.id)).entries
      expect(row?.actor).toEqual({ kind: "service-account", id: apiKey.id, name: "importer" })
    })
  )

  it.effect("Changes: nested, not flattened; structs whole; collections by id; empty buckets omitted", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const created = yield* createRecord(client, deal, {
        title: "Fleet",
        amount: "10.00",
        closeDate: "2026-12-01",
        address: { street: "Main 1", city: "Oslo", country: "NO" },
        lineItems: [
          { id: "keep", product: "truck", quantity: 2, price: "5.00" },
          { id: "edit", product: "van", quantity: 1, price: "3.00" },
          { id: "drop", product: "bike", quantity: 9, price: "1.00" }
        ]
      })
      const deals = recordsOf(client, deal)
      yield* deals.update(created.id, {
        amount: "12.50",
        closeDate: "2027-01-15",
        address: { street: "Main 2", city: "Oslo", country: "NO" },
        lineItems: [
          { id: "keep", product: "truck", quantity: 2, price: "5.00" },
          { id: "edit", product: "van", quantity: 4, price: "3.00" },
          { id: "new", product: "boat", quantity: 1, price: "99.90" }
        ]
      })
      const [updated] = (yield* timelineOf(client, deal, created.id)).entries
      expect(updated?.changes).toEqual({
        amount: { from: "10.00", to: "12.50" },
        closeDate: { from: "2026-12-01", to: "2027-01-15" },
        address: {
          from: { street: "Main 1", city: "Oslo", country: "NO" },
          to: { street: "Main 2", city: "Oslo", country: "NO" }
        },
        lineItems: {
          added: [{ id: "new", values: { product: "boat", quantity: 1, price: "99.90" } }],
          modified: [{ id: "edit", changes: { quantity: { from: 1, to: 4 } } }],
          removed: [{ id: "drop" }]
        }
      })

      // A struct appearing and clearing; a collection only growing: no empty buckets.
      const plain = yield* createRecord(client, deal, { title: "Plain" })
      yield* deals.update(plain.id, { address: { city: "Bergen" }, lineItems: [{ id: "x", product: "p" }] })
      yield* deals.update(plain.id, { address: null })
      const [cleared, appeared] = (yield* timelineOf(client, deal, plain.id)).entries
      expect(appeared?.changes).toEqual({
        address: { from: null, to: { city: "Bergen" } },
        lineItems: { added: [{ id: "x", values: { product: "p" } }] }
      })
      expect(cleared?.changes).toEqual({ address: { from: { city: "Bergen" }, to: null } })
    })
  )

  it.effect("bad values are a 400 naming the field, and change nothing", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const created = yield* createRecord(client, deal, { title: "Valid", amount: "1.00" })
      const deals = recordsOf(client, deal)
      const cases: Array<[Record<string, unknown>, RegExp]> = [
        [{ amount: 12.5 }, /amount: /],
        [{ amount: "12,50" }, /amount: a decimal is a string of digits/],
        [{ closeDate: "2026-02-30" }, /closeDate: not a calendar date/],
        [{ closeDate: "01/02/2026" }, /closeDate: a date is a yyyy-MM-dd string/],
        [{ address: { town: "Oslo" } }, /address\.town: unknown field/],
        // An entry without an id is new (the service names it); an empty one is not an id.
        [{ lineItems: [{ id: " ", product: "blank id" }] }, /lineItems\.0\.id: /],
        [{ lineItems: [{ id: "a" }, { id: "a" }] }, /lineItems: collection entries need distinct ids/],
        [{ colour: "red" }, /colour: unknown field/]
      ]
      for (const [values, message] of cases) {
        const response = yield* refusal(deals.update(created.id, values))
        expect(response.status, JSON.stringify(values)).toBe(400)
        expect(response.body).toMatchObject({ _tag: "BadRequest", message: expect.stringMatching(message) })
      }
      const refused = yield* refusal(deals.create({ amount: "x" }))
      expect(refused.status).toBe(400)
      const current = (yield* deals.get(created.id)).body
      expect(current.values).toEqual({ title: "Valid", amount: "1.00" })
      expect((yield* timelineOf(client, deal, created.id)).entries).toHaveLength(1)
    })
  )

  it.effect("lifecycle: transitions out of order are 409; archived records are read-only", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(yield* baseUrl, workspace)
      const record = yield* createRecord(client, deal, { title: "Live" })
      const deals = recordsOf(client, deal)
      expect((yield* refusal(deals.publish(record.id))).status).toBe(409)
      expect((yield* refusal(deals.restore(record.id))).status).toBe(409)
      yield* deals.archive(record.id)
      const readOnly = yield* refusal(deals.update(record.id, { title: "Edited" }))
      expect(readOnly.status).toBe(409)
      expect(readOnly.body).toEqual({
        _tag: "Conflict",
        message: "cannot update an archived crm/deal record",
        requestId: expect.any(String)
      })
      expect((yield* refusal(deals.get("not-a-uuid"))).status).toBe(404)
      expect((yield* refusal(recordsOf(client, "crm/nothing").create({}))).status).toBe(404)
      expect((yield* refusal(deals.action("explode", record.id))).status).toBe(404)
    })
  )

  it.effect("grants: read lets you read records and timelines; writing needs update", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client: admin } = yield* signedInMember(base, workspace)
      const roles = yield* Roles
      yield* roles.grant(workspace, "deal-reader", deal, "read")
      const { client: reader } = yield* signedInMember(base, workspace, "deal-reader")
      const record = yield* createRecord(admin, deal, { title: "Watched" })
      const readersDeals = recordsOf(reader, deal)
      expect((yield* readersDeals.get(record.id)).status).toBe(200)
      expect((yield* timelineOf(reader, deal, record.id)).entries).toHaveLength(1)
      const denied = yield* refusal(readersDeals.update(record.id, { title: "Mine" }))
      expect(denied.status).toBe(403)
      expect((yield* refusal(readersDeals.create({}))).status).toBe(403)
      expect((yield* refusal(readersDeals.action("close", record.id))).status).toBe(403)
      expect((yield* refusal(recordsOf(reader, "crm/company").list())).status).toBe(403)
      expect((yield* refusal(timelineCall(reader, "crm/company", record.id))).status).toBe(403)
      expect((yield* timelineOf(admin, deal, record.id)).entries).toHaveLength(1)
    })
  )
})
