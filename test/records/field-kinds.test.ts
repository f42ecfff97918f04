import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { field } from "../../src/api/Field"
import type { Workspace } from "../../src/api/Workspace"
import type { Plugin } from "../../src/plugins/Plugin"
import { PluginRegistry } from "../../src/plugins/PluginRegistry"
import { crm } from "../../src/plugins/crm"
import { eventually } from "../broadcast/streamHelpers"
import { createRecord, expectStatus, signedInMember, timelineOf } from "../support/api"
import type { Client } from "../support/api"
import type { StoredRecord } from "../../src/api/StoredRecord"
import { holdInTransaction } from "../support/holdInTransaction"
import { baseUrl, freshWorkspace, testApp } from "../support/TestApp"

/** A record as sent. */
type RecordBody = typeof StoredRecord.Encoded

/**
 * Field kinds choice and link, and `required`, enforced by the service on
 * every write (docs/fields.md): 422 naming the field, nothing written.
 */

const kinds: Plugin = {
  namespace: "kinds",
  label: "Kinds",
  businessObjects: {
    target: { label: "Target", title: "name", fields: { name: field.string } },
    item: {
      label: "Item",
      title: "name",
      fields: {
        name: field.required(field.string),
        stage: field.choice(["lead", "won", "lost"]),
        owner: field.link("kinds/target"),
        place: field.struct({ site: field.link("kinds/target"), code: field.required(field.string) }),
        parts: field.collection({
          supplier: field.link("kinds/target"),
          grade: field.required(field.choice(["a", "b"]))
        })
      }
    }
  }
}

const item = "kinds/item"
const target = "kinds/target"
/** A well-formed record id that names nothing. */
const nobody = "0190a3b4-0000-7000-8000-000000000001"

const refusal = (message: string) => ({
  _tag: "UnprocessableEntity",
  message: `invalid values for ${item}: ${message}`,
  requestId: expect.any(String)
})

const listOf = (client: Client, businessObject: string) =>
  Effect.map(
    client.get(`/api/records/${businessObject}`),
    (r) => (expectStatus(200)(r) as { records: Array<RecordBody> }).records
  )

const readRecord = (client: Client, businessObject: string, id: string) =>
  Effect.map(client.get(`/api/records/${businessObject}/${id}`), (r) => expectStatus(200)(r) as RecordBody)

/** Creating `values` is refused with 422 and `message`; no item exists afterwards. */
const refusedCreate = (client: Client, values: unknown, message: string, draft = false) =>
  Effect.gen(function* () {
    const before = (yield* listOf(client, item)).length
    const response = yield* client.post(`/api/records/${item}`, { values, draft })
    expect(response.status, JSON.stringify(values)).toBe(422)
    expect(response.body).toEqual(refusal(message))
    expect(yield* listOf(client, item)).toHaveLength(before)
  })

/** Patching `values` is refused with 422 and `message`; the record and its timeline are as they were. */
const refusedPatch = (client: Client, record: RecordBody, values: unknown, message: string) =>
  Effect.gen(function* () {
    const rows = (yield* timelineOf(client, item, record.id)).entries.length
    const response = yield* client.patch(`/api/records/${item}/${record.id}`, { values })
    expect(response.status, JSON.stringify(values)).toBe(422)
    expect(response.body).toEqual(refusal(message))
    expect((yield* readRecord(client, item, record.id)).values).toEqual(record.values)
    expect((yield* timelineOf(client, item, record.id)).entries).toHaveLength(rows)
  })

const setUp = Effect.gen(function* () {
  const workspace = yield* freshWorkspace
  const { client } = yield* signedInMember(yield* baseUrl, workspace)
  return { workspace, client }
})

layer(testApp({}, PluginRegistry.layerWith([crm, kinds])), { excludeTestServices: true })("field kinds", (it) => {
  it.effect("GET /api/business-objects serves the kinds with their options, target and required", () =>
    Effect.gen(function* () {
      const { client } = yield* setUp
      const definition = expectStatus(200)(yield* client.get(`/api/business-objects/${encodeURIComponent(item)}`))
      expect(definition).toEqual({
        name: item,
        label: "Item",
        title: "name",
        actions: [],
        actionLabels: {},
        columns: [],
        fields: {
          name: { kind: "string", required: true },
          stage: { kind: "choice", options: ["lead", "won", "lost"] },
          owner: { kind: "link", target },
          place: {
            kind: "struct",
            fields: { site: { kind: "link", target }, code: { kind: "string", required: true } }
          },
          parts: {
            kind: "collection",
            fields: {
              supplier: { kind: "link", target },
              grade: { kind: "choice", options: ["a", "b"], required: true }
            }
          }
        }
      })
    })
  )

  it.effect("choice: a value outside the options is 422 naming the field and the options, the input excerpted", () =>
    Effect.gen(function* () {
      const { client } = yield* setUp
      yield* refusedCreate(
        client,
        { name: "A", stage: "maybe" },
        'stage: "maybe" is not one of the options "lead", "won", "lost"'
      )
      yield* refusedCreate(
        client,
        { name: "A", stage: "x".repeat(5000) },
        `stage: "${"x".repeat(40)}…" is not one of the options "lead", "won", "lost"`
      )
      yield* refusedCreate(
        client,
        {
          name: "A",
          parts: [
            { id: "p1", grade: "a" },
            { id: "p2", grade: "A" }
          ]
        },
        'parts[1].grade: "A" is not one of the options "a", "b"'
      )
      // Not a string at all is malformed (400), as for any kind.
      expect((yield* client.post(`/api/records/${item}`, { values: { name: "A", stage: 1 } })).status).toBe(400)

      const record = yield* createRecord(client, item, { name: "A", stage: "lead" })
      yield* refusedPatch(
        client,
        record,
        { stage: "Won" },
        'stage: "Won" is not one of the options "lead", "won", "lost"'
      )
      const patched = expectStatus(200)(
        yield* client.patch(`/api/records/${item}/${record.id}`, { values: { stage: "won" } })
      )
      expect(patched).toMatchObject({ values: { name: "A", stage: "won" } })
    })
  )

  it.effect("required on create: absent, null, empty or blank is 422 naming each field, nested ones by path", () =>
    Effect.gen(function* () {
      const { client } = yield* setUp
      for (const name of [undefined, null, "", "  "]) {
        yield* refusedCreate(client, name === undefined ? {} : { name }, "name: a value is required")
      }
      yield* refusedCreate(
        client,
        {
          place: { site: null },
          parts: [
            { id: "p1", grade: "a" },
            { id: "p2", supplier: null }
          ]
        },
        "name: a value is required; place.code: a value is required; parts[1].grade: a value is required"
      )
      // A struct or collection left out requires nothing of its members.
      expectStatus(201)(yield* client.post(`/api/records/${item}`, { values: { name: "Whole" } }))
    })
  )

  it.effect("required on PATCH: cannot be cleared or emptied; a patch that leaves it out is fine", () =>
    Effect.gen(function* () {
      const { client } = yield* setUp
      const record = yield* createRecord(client, item, { name: "Kiosk", place: { code: "K1" } })
      yield* refusedPatch(client, record, { name: null }, "name: a value is required")
      yield* refusedPatch(client, record, { name: "" }, "name: a value is required")
      yield* refusedPatch(client, record, { place: { site: null } }, "place.code: a value is required")
      yield* refusedPatch(client, record, { parts: [{ id: "p1" }] }, "parts[0].grade: a value is required")
      const patched = expectStatus(200)(
        yield* client.patch(`/api/records/${item}/${record.id}`, { values: { stage: "won" } })
      )
      expect(patched).toMatchObject({ values: { name: "Kiosk", stage: "won", place: { code: "K1" } } })
    })
  )

  it.effect("drafts: required waits for publish, which checks the whole record; choices are checked at once", () =>
    Effect.gen(function* () {
      const { client } = yield* setUp
      const draft = yield* createRecord(client, item, { stage: "lead", parts: [{ id: "p1" }] }, true)
      expectStatus(200)(yield* client.patch(`/api/records/${item}/${draft.id}`, { values: { name: null } }))
      yield* refusedCreate(
        client,
        { stage: "maybe" },
        'stage: "maybe" is not one of the options "lead", "won", "lost"',
        true
      )

      const publish = yield* client.post(`/api/records/${item}/${draft.id}/publish`)
      expect(publish.status).toBe(422)
      expect(publish.body).toEqual(refusal("name: a value is required; parts[0].grade: a value is required"))
      expect(yield* readRecord(client, item, draft.id)).toMatchObject({ state: "draft" })
      expect((yield* timelineOf(client, item, draft.id)).entries).toEqual([])

      expectStatus(200)(
        yield* client.patch(`/api/records/${item}/${draft.id}`, {
          values: { name: "Ready", parts: [{ id: "p1", grade: "b" }] }
        })
      )
      expect(expectStatus(200)(yield* client.post(`/api/records/${item}/${draft.id}/publish`))).toMatchObject({
        state: "operational"
      })
    })
  )

  it.effect("link: to a missing, deleted, archived, draft or other-type record is 422; nothing written", () =>
    Effect.gen(function* () {
      const { client } = yield* setUp
      const deleted = yield* createRecord(client, target, { name: "Gone" })
      expect((yield* client.del(`/api/records/${target}/${deleted.id}`)).status).toBe(204)
      const archived = yield* createRecord(client, target, { name: "Old" })
      expectStatus(200)(yield* client.post(`/api/records/${target}/${archived.id}/archive`))
      const draft = yield* createRecord(client, target, { name: "Soon" }, true)
      const company = yield* createRecord(client, "crm/company", { name: "Not a target" })

      const cases: ReadonlyArray<[string, string]> = [
        [nobody, `no ${target} record "${nobody}"`],
        ["not-an-id", `no ${target} record "not-an-id"`],
        ["", `no ${target} record ""`],
        [nobody.toUpperCase(), `no ${target} record "${nobody.toUpperCase()}"`],
        [deleted.id, `no ${target} record "${deleted.id}"`],
        [company.id, `no ${target} record "${company.id}"`],
        [archived.id, `the ${target} record "${archived.id}" is archived`],
        [draft.id, `the ${target} record "${draft.id}" is a draft`]
      ]
      for (const [id, says] of cases) yield* refusedCreate(client, { name: "A", owner: id }, `owner: ${says}`)
    })
  )

  it.effect("link: checked inside structs and collection entries, each named by its path", () =>
    Effect.gen(function* () {
      const { client } = yield* setUp
      const live = yield* createRecord(client, target, { name: "Live" })
      yield* refusedCreate(
        client,
        {
          name: "A",
          owner: live.id,
          place: { site: nobody, code: "P" },
          parts: [
            { id: "p1", supplier: live.id, grade: "a" },
            { id: "p2", supplier: nobody, grade: "b" }
          ]
        },
        `place.site: no ${target} record "${nobody}"; parts[1].supplier: no ${target} record "${nobody}"`
      )
      const made = yield* createRecord(client, item, {
        name: "A",
        owner: live.id,
        place: { site: live.id, code: "P" },
        parts: [{ id: "p1", supplier: live.id, grade: "a" }]
      })
      expect(made.values).toMatchObject({ owner: live.id, place: { site: live.id }, parts: [{ supplier: live.id }] })
    })
  )

  it.effect("link: another workspace's record is no record here", () =>
    Effect.gen(function* () {
      const { client } = yield* setUp
      const other = yield* setUp
      const theirs = yield* createRecord(other.client, target, { name: "Theirs" })
      yield* refusedCreate(client, { name: "A", owner: theirs.id }, `owner: no ${target} record "${theirs.id}"`)
    })
  )

  it.effect("link on PATCH and publish; a target deleted or archived later leaves the link as it is", () =>
    Effect.gen(function* () {
      const { client } = yield* setUp
      const first = yield* createRecord(client, target, { name: "First" })
      const second = yield* createRecord(client, target, { name: "Second" })
      const record = yield* createRecord(client, item, { name: "A", owner: first.id })
      const draft = yield* createRecord(client, item, { name: "D", owner: second.id }, true)

      expect((yield* client.del(`/api/records/${target}/${first.id}`)).status).toBe(204)
      expectStatus(200)(yield* client.post(`/api/records/${target}/${second.id}/archive`))
      // Reads show the link as written: the page shows its target as missing.
      expect((yield* readRecord(client, item, record.id)).values).toEqual({ name: "A", owner: first.id })

      // A patch that keeps the link (or sends it again unchanged) is not held up by it.
      expectStatus(200)(yield* client.patch(`/api/records/${item}/${record.id}`, { values: { stage: "won" } }))
      expectStatus(200)(
        yield* client.patch(`/api/records/${item}/${record.id}`, { values: { name: "B", owner: first.id } })
      )
      const current = yield* readRecord(client, item, record.id)
      // Pointing it at a record that is not live is refused.
      yield* refusedPatch(
        client,
        current,
        { owner: second.id },
        `owner: the ${target} record "${second.id}" is archived`
      )
      yield* refusedPatch(
        client,
        current,
        { parts: [{ id: "p1", supplier: nobody, grade: "a" }] },
        `parts[0].supplier: no ${target} record "${nobody}"`
      )
      // Clearing it is fine.
      expect(
        expectStatus(200)(yield* client.patch(`/api/records/${item}/${record.id}`, { values: { owner: null } }))
      ).toMatchObject({ values: { name: "B", stage: "won" } })

      // Publishing is the record's birth: its links must be live then.
      const publish = yield* client.post(`/api/records/${item}/${draft.id}/publish`)
      expect(publish.status).toBe(422)
      expect(publish.body).toEqual(refusal(`owner: the ${target} record "${second.id}" is archived`))
      expectStatus(200)(yield* client.post(`/api/records/${target}/${second.id}/restore`))
      expectStatus(200)(yield* client.post(`/api/records/${item}/${draft.id}/publish`))
    })
  )

  it.effect("link: a write waits for a concurrent delete of its target, then is refused (no dangling link born)", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const { client, workspace } = yield* setUp
      const doomed = yield* createRecord(client, target, { name: "Doomed" })
      // Another transaction deletes the target and has not committed yet.
      const commit = yield* holdInTransaction(
        sql`DELETE FROM ${sql(workspace.table("records"))} WHERE business_object = ${target} AND id = ${doomed.id}`
      )
      const write = yield* Effect.forkChild(
        client.post(`/api/records/${item}`, { values: { name: "A", owner: doomed.id } })
      )
      yield* eventually("the write waits on the target's row lock", waitsOnRecordRow(workspace))
      yield* commit
      const answer = yield* Fiber.join(write)
      expect(answer.status).toBe(422)
      expect(answer.body).toEqual(refusal(`owner: no ${target} record "${doomed.id}"`))
      expect(yield* listOf(client, item)).toEqual([])
    })
  )
})

/** A statement of this workspace's records waits for a row lock. */
const waitsOnRecordRow = (workspace: Workspace) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE NOT l.granted AND a.wait_event_type = 'Lock' AND a.query LIKE ${`%${workspace.schema}%FOR KEY SHARE%`}`.pipe(
      Effect.map((rows) => (rows[0]?.n ?? 0) > 0),
      Effect.orDie
    )
  )

layer(testApp(), { excludeTestServices: true })("field kinds in the crm plugin", (it) => {
  it.effect("a deal's stage is a choice, its title required, its company a link to a live crm/company", () =>
    Effect.gen(function* () {
      const { client } = yield* setUp
      const post = (values: unknown) => client.post("/api/records/crm/deal", { values })
      const bad = yield* post({ title: "Kiosk", stage: "closed" })
      expect(bad.status).toBe(422)
      expect((bad.body as { message: string }).message).toBe(
        'invalid values for crm/deal: stage: "closed" is not one of the options "lead", "open", "qualified", "proposal", "negotiation", "won", "lost"'
      )
      expect((yield* post({ stage: "open" })).body).toEqual({
        _tag: "UnprocessableEntity",
        message: "invalid values for crm/deal: title: a value is required",
        requestId: expect.any(String)
      })
      expect((yield* post({ title: "Kiosk", company: nobody })).body).toEqual({
        _tag: "UnprocessableEntity",
        message: `invalid values for crm/deal: company: no crm/company record "${nobody}"`,
        requestId: expect.any(String)
      })
      expect(yield* listOf(client, "crm/deal")).toEqual([])
    })
  )

  it.effect("archiving a deal whose company is gone: the workflow notes it in an activity without the link", () =>
    Effect.gen(function* () {
      const { client } = yield* setUp
      const acme = yield* createRecord(client, "crm/company", { name: "Acme" })
      const deal = yield* createRecord(client, "crm/deal", { title: "Orphan", company: acme.id })
      expect((yield* client.del(`/api/records/crm/company/${acme.id}`)).status).toBe(204)
      expectStatus(200)(yield* client.post(`/api/records/crm/deal/${deal.id}/archive`))
      yield* eventually(
        "the workflow has run",
        Effect.map(listOf(client, "crm/activity"), (records) => records.length === 1)
      )
      const [note] = yield* listOf(client, "crm/activity")
      expect(note?.values).toEqual({ subject: 'Deal "Orphan" was archived' })
    })
  )
})
