import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { baseUrl, freshWorkspace, TestApp } from "../support/TestApp"
import { createRecord, recordsOf, signedInMember, timelineOf } from "../support/api"
import type { Client } from "../support/api"
import { typePath } from "../support/apiCaller"
import { request } from "../support/http"

/** Names that plain-object indexing would find on Object.prototype. */
const prototypeNames = ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"] as const

const deal = "crm/deal"

/** A JSON body sent exactly as written: JSON.stringify of an object literal could not carry an own "__proto__". */
const rawJson = (client: Client, method: string, path: string, body: string, cookie: string) =>
  request(`${client.base}${path}`, { method, headers: { cookie, "content-type": "application/json" }, body })

const put = (client: Client, path: string, cookie: string) =>
  request(`${client.base}${path}`, { method: "PUT", headers: { cookie } })

const notFound = expect.objectContaining({ _tag: "NotFound", message: expect.any(String) })

const presenceOf = (client: Client) =>
  Effect.map(
    client.call((api) => api.presence.list({ params: typePath(deal) })),
    (answer) => answer.body
  )

layer(TestApp, { excludeTestServices: true })("names from requests that are Object.prototype's", (it) => {
  it.effect("an action named after a prototype member is an unknown action: 404, nothing run", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const record = yield* createRecord(client, deal, { title: "Target", stage: "open" })
      for (const action of prototypeNames) {
        const response = yield* client.post(`/api/actions/${deal}/${action}`, { id: record.id })
        expect(response.status, action).toBe(404)
        expect(response.body, action).toEqual(notFound)
      }
      expect((yield* timelineOf(client, deal, record.id)).entries).toHaveLength(1)
    })
  )

  it.effect("a business object named after prototype members is unknown on every route: 404", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client, cookie } = yield* signedInMember(base, workspace)
      const id = crypto.randomUUID()
      for (const [namespace, name] of [
        ["__proto__", "constructor"],
        ["constructor", "prototype"],
        ["crm", "__proto__"],
        ["toString", "valueOf"]
      ]) {
        const type = `${namespace}/${name}`
        const answers = [
          yield* client.get(`/api/records/${type}`),
          yield* client.post(`/api/records/${type}`, { values: {} }),
          yield* client.get(`/api/records/${type}/${id}`),
          yield* client.post(`/api/actions/${type}/close`, { id }),
          yield* client.get(`/api/audit/business-object/${encodeURIComponent(type)}/${id}`),
          yield* client.get(`/api/presence/${type}`),
          yield* put(client, `/api/presence/${type}/${id}/editor-1`, cookie)
        ]
        for (const response of answers) {
          expect(response.status, type).toBe(404)
          expect(response.body, type).toEqual(notFound)
        }
      }
    })
  )

  it.effect(
    "values with an own __proto__ (or an undeclared prototype name) are a 400 naming it, and change nothing",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* signedInMember(base, workspace)
        const record = yield* createRecord(client, deal, { title: "Kept", stage: "open" })
        const bodies = [
          `{"values":{"__proto__":{"title":"Injected","stage":"won"}}}`,
          `{"values":{"title":"Injected","__proto__":{"stage":"won"}}}`,
          `{"values":{"address":{"__proto__":{"city":"Injected"}}}}`,
          `{"values":{"lineItems":[{"id":"l1","__proto__":{"product":"Injected"}}]}}`,
          `{"values":{"constructor":"Injected"}}`,
          `{"values":{"toString":"Injected"}}`
        ]
        for (const body of bodies) {
          const created = yield* rawJson(client, "POST", `/api/records/${deal}`, body, cookie)
          expect(created.status, body).toBe(400)
          expect(created.body, body).toEqual({
            _tag: "BadRequest",
            message: expect.stringMatching(/unknown field|__proto__|constructor|toString/),
            requestId: expect.any(String)
          })
          const updated = yield* rawJson(client, "PATCH", `/api/records/${deal}/${record.id}`, body, cookie)
          expect(updated.status, body).toBe(400)
        }
        const list = (yield* recordsOf(client, deal).list()).body
        expect(list.records.map((r) => r.values)).toEqual([{ title: "Kept", stage: "open" }])
        expect((yield* timelineOf(client, deal, record.id)).entries).toHaveLength(1)
      })
  )

  it.effect("prototype names as data (a title, collection entry ids, an editor id) are ordinary values", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client, cookie } = yield* signedInMember(base, workspace)
      const record = yield* createRecord(client, deal, {
        title: "__proto__",
        lineItems: [
          { id: "__proto__", product: "constructor" },
          { id: "constructor", product: "toString" }
        ]
      })
      expect(record.values).toEqual({
        title: "__proto__",
        lineItems: [
          { id: "__proto__", product: "constructor" },
          { id: "constructor", product: "toString" }
        ]
      })
      const updated = (yield* recordsOf(client, deal).update(record.id, {
        title: "constructor",
        lineItems: [
          { id: "__proto__", product: "valueOf" },
          { id: "hasOwnProperty", product: "x" }
        ]
      })).body
      expect(updated.values).toEqual({
        title: "constructor",
        lineItems: [
          { id: "__proto__", product: "valueOf" },
          { id: "hasOwnProperty", product: "x" }
        ]
      })
      const [newest] = (yield* timelineOf(client, deal, record.id)).entries
      expect(newest?.changes).toEqual({
        title: { from: "__proto__", to: "constructor" },
        lineItems: {
          added: [{ id: "hasOwnProperty", values: { product: "x" } }],
          modified: [{ id: "__proto__", changes: { product: { from: "constructor", to: "valueOf" } } }],
          removed: [{ id: "constructor" }]
        }
      })

      for (const editor of ["__proto__", "constructor"]) {
        expect((yield* put(client, `/api/presence/${deal}/${record.id}/${editor}`, cookie)).status, editor).toBe(204)
      }
      const listed = yield* presenceOf(client)
      expect(listed.records[record.id]?.map((e) => e.id).sort()).toEqual(["__proto__", "constructor"])
    })
  )

  it.effect("presence: a record id __proto__ is a 404 at heartbeat time, and everyone's list keeps working", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client, cookie } = yield* signedInMember(base, workspace)
      const record = yield* createRecord(client, deal, { title: "Open" })
      expect((yield* put(client, `/api/presence/${deal}/${record.id}/tab-1`, cookie)).status).toBe(204)
      for (const id of prototypeNames) {
        const response = yield* put(client, `/api/presence/${deal}/${id}/tab-2`, cookie)
        expect(response.status, id).toBe(404)
        expect(response.body, id).toEqual(notFound)
      }
      const listed = yield* presenceOf(client)
      expect(Object.keys(listed.records)).toEqual([record.id])
      expect(listed.records[record.id]?.map((e) => e.id)).toEqual(["tab-1"])
    })
  )

  it.effect(
    "presence: an editor may be on a draft or an operational record; a deleted one is a 404 on renewal, an archived one a 409, and the editor goes",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* signedInMember(base, workspace)
        const heartbeat = (id: string, editor = "tab-1", type = deal) =>
          put(client, `/api/presence/${type}/${id}/${editor}`, cookie)
        const editorsOf = (id: string) =>
          Effect.map(presenceOf(client), (listed) => listed.records[id]?.map((e) => e.id) ?? [])

        const draft = yield* createRecord(client, deal, { title: "Draft" }, true)
        expect((yield* heartbeat(draft.id)).status).toBe(204)

        // A record of another business object is no deal.
        const company = yield* createRecord(client, "crm/company", { name: "Elsewhere" })
        expect((yield* heartbeat(company.id)).status).toBe(404)
        expect(yield* editorsOf(company.id)).toEqual([])

        // Renewing an editor whose record was deleted meanwhile: 404, and it is no longer listed.
        const doomed = yield* createRecord(client, deal, { title: "Doomed" })
        expect((yield* heartbeat(doomed.id)).status).toBe(204)
        expect((yield* heartbeat(doomed.id)).status).toBe(204)
        yield* recordsOf(client, deal).remove(doomed.id)
        const gone = yield* heartbeat(doomed.id)
        expect(gone.status).toBe(404)
        expect(gone.body).toEqual(notFound)
        expect(yield* editorsOf(doomed.id)).toEqual([])

        // Archived: not editable until restored.
        const shelved = yield* createRecord(client, deal, { title: "Shelved" })
        expect((yield* heartbeat(shelved.id)).status).toBe(204)
        yield* recordsOf(client, deal).archive(shelved.id)
        const archived = yield* heartbeat(shelved.id)
        expect(archived.status).toBe(409)
        expect(archived.body).toEqual({
          _tag: "Conflict",
          message: expect.stringContaining("archived"),
          requestId: expect.any(String)
        })
        expect(yield* editorsOf(shelved.id)).toEqual([])
        yield* recordsOf(client, deal).restore(shelved.id)
        expect((yield* heartbeat(shelved.id)).status).toBe(204)
        expect(yield* editorsOf(shelved.id)).toEqual(["tab-1"])
      })
  )

  it.effect("sign-in with prototype names as workspace or email: the usual 401", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      for (const name of prototypeNames) {
        const response = yield* request(`${base}/api/auth/login`, {
          method: "POST",
          json: { workspace: name, email: `${name}@example.com`, password: name }
        })
        expect(response.status, name).toBe(401)
        expect(response.body).toEqual({
          _tag: "Unauthorized",
          message: "wrong workspace, email or password",
          requestId: expect.any(String)
        })
      }
    })
  )
})
