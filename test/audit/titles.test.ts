import { expect, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { BusinessObjectList } from "../../src/api/BusinessObjectsApi"
import { Roles } from "../../src/auth/Roles"
import { CorrelationView, FeedEntry, FeedPage } from "../../src/api/Feed"
import { clientFor, createRecord, recordsOf, signedInMember, timelineOf } from "../support/api"
import { openSse } from "../support/sse"
import { baseUrl, freshWorkspace, TestApp } from "../support/TestApp"

/**
 * Titles where a person reads records (docs/titles.md), over real HTTP and
 * PostgreSQL: beside a record and its link values in every record answer,
 * beside each audit row (timeline, feed page, SSE, correlation) for its own
 * record, its event cause and its links; today's title, a deleted target's
 * last one marked deleted; the definitions' labels.
 */

const deal = "crm/deal"
const company = "crm/company"

layer(TestApp, { excludeTestServices: true })("titles", (it) => {
  it.effect("records: their title and their links' titles on create, get, list, update and as of an entry", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const acme = yield* createRecord(client, company, { name: "Acme Corporation" })
      expect(acme.title).toBe("Acme Corporation")
      expect(acme.titles).toEqual({})
      const kiosk = yield* createRecord(client, deal, { title: "Kiosk", company: acme.id })
      expect(kiosk.title).toBe("Kiosk")
      expect(kiosk.titles).toEqual({ [acme.id]: { title: "Acme Corporation", deleted: false } })
      const deals = recordsOf(client, deal)
      const got = (yield* deals.get(kiosk.id).pipe(Effect.orDie)).body
      expect([got.title, got.titles]).toEqual([kiosk.title, kiosk.titles])
      const listed = (yield* deals.list().pipe(Effect.orDie)).body.records.find((record) => record.id === kiosk.id)
      expect([listed?.title, listed?.titles]).toEqual([kiosk.title, kiosk.titles])
      const renamed = (yield* deals.update(kiosk.id, { title: "Kiosk rollout" }).pipe(Effect.orDie)).body
      expect(renamed.title).toBe("Kiosk rollout")
      // As of its creation: the title it had then, the link's title today.
      const created = (yield* timelineOf(client, deal, kiosk.id)).entries.at(-1)
      const then = (yield* deals.asOf(kiosk.id, created?.id ?? "").pipe(Effect.orDie)).body
      expect(then.title).toBe("Kiosk")
      expect(then.titles).toEqual({ [acme.id]: { title: "Acme Corporation", deleted: false } })
      // An empty title field reads "Untitled <type>" (a draft may leave the required title empty).
      const draft = (yield* deals.create({}, { draft: true }).pipe(Effect.orDie)).body
      expect(draft.title).toBe("Untitled deal")
    })
  )

  it.effect("a 412's rows name the link the other writer removed, as the timeline does", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client, cookie } = yield* signedInMember(base, workspace)
      const acme = yield* createRecord(client, company, { name: "Acme" })
      const globex = yield* createRecord(client, company, { name: "Globex" })
      const kiosk = yield* createRecord(client, deal, { title: "Kiosk", company: acme.id })
      yield* recordsOf(client, deal).update(kiosk.id, { company: globex.id }).pipe(Effect.orDie)
      const stale = yield* clientFor(base, cookie, { "if-match": `"${kiosk.version}"` }).patch(
        `/api/records/${deal}/${kiosk.id}`,
        { values: { title: "Kiosk rollout" } }
      )
      expect(stale.status).toBe(412)
      const body = Schema.decodeUnknownSync(Schema.Struct({ entries: Schema.Array(Schema.Unknown) }))(stale.body)
      expect(body.entries).toEqual([
        expect.objectContaining({
          operation: "updated",
          titles: {
            [kiosk.id]: { title: "Kiosk", deleted: false },
            [acme.id]: { title: "Acme", deleted: false },
            [globex.id]: { title: "Globex", deleted: false }
          }
        })
      ])
    })
  )

  it.effect("a deleted target: its last title, marked deleted, beside the records and rows that link to it", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const acme = yield* createRecord(client, company, { name: "Acme" })
      const companies = recordsOf(client, company)
      yield* companies.update(acme.id, { name: "Acme Corporation" }).pipe(Effect.orDie)
      const kiosk = yield* createRecord(client, deal, { title: "Kiosk", company: acme.id })
      yield* companies.remove(acme.id).pipe(Effect.orDie)
      const gone = { [acme.id]: { title: "Acme Corporation", deleted: true } }
      expect((yield* recordsOf(client, deal).get(kiosk.id).pipe(Effect.orDie)).body.titles).toEqual(gone)
      const rows = (yield* timelineOf(client, deal, kiosk.id)).entries
      expect(rows.at(-1)?.titles).toEqual({ [kiosk.id]: { title: "Kiosk", deleted: false }, ...gone })
      // The company's own timeline names it by its last title, deleted, on every row (today's, not the row's).
      const own = (yield* timelineOf(client, company, acme.id)).entries
      expect(own.map((row) => row.titles?.[acme.id])).toEqual(own.map(() => gone[acme.id]))
    })
  )

  it.effect("a caller who may not read the target's business object is told no title of it", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const acme = yield* createRecord(client, company, { name: "Acme" })
      const kiosk = yield* createRecord(client, deal, { title: "Kiosk", company: acme.id })
      yield* (yield* Roles).grant(workspace, "deal-reader", deal, "read")
      const reader = (yield* signedInMember(base, workspace, "deal-reader")).client
      const seen = (yield* recordsOf(reader, deal).get(kiosk.id).pipe(Effect.orDie)).body
      expect([seen.title, seen.titles]).toEqual(["Kiosk", {}])
      const rows = (yield* timelineOf(reader, deal, kiosk.id)).entries
      expect(rows.at(-1)?.titles).toEqual({ [kiosk.id]: { title: "Kiosk", deleted: false } })
    })
  )

  it.effect(
    "feed pages (either order), SSE events and the correlation view: each row with its record's, cause's and links' titles",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* signedInMember(base, workspace)
        const acme = yield* createRecord(client, company, { name: "Acme" })
        const start = Schema.decodeUnknownSync(FeedPage)((yield* client.get("/api/audit/feed?limit=500")).body)
        const sse = yield* openSse(`${base}/api/audit/feed?cursor=${start.nextCursor}`, {
          cookie,
          accept: "text/event-stream"
        })
        const kiosk = yield* createRecord(client, deal, { title: "Kiosk", company: acme.id })
        // Closing it: the listeners count it on the company (a cascade, caused by the deal's update).
        const closed = yield* recordsOf(client, deal).action("close", kiosk.id).pipe(Effect.orDie)
        const expected = {
          [kiosk.id]: { title: "Kiosk", deleted: false },
          [acme.id]: { title: "Acme", deleted: false }
        }
        const page = Schema.decodeUnknownSync(FeedPage)(
          (yield* client.get(`/api/audit/feed?limit=500&cursor=${start.nextCursor}`)).body
        )
        const created = page.entries.find((row) => row.businessObjectId === kiosk.id && row.operation === "created")
        expect(created?.titles).toEqual(expected)
        const counted = page.entries.find((row) => row.businessObjectId === acme.id && row.operation === "updated")
        expect(counted?.cause).toMatchObject({ kind: "event", businessObjectId: kiosk.id })
        expect(counted?.titles).toEqual(expected)
        // Newest first (Activity's pages): the same rows, the same titles.
        const newest = Schema.decodeUnknownSync(FeedPage)(
          (yield* client.get("/api/audit/feed?limit=500&order=newest")).body
        )
        expect(newest.entries.slice(0, page.entries.length).map((row) => [row.id, row.titles])).toEqual(
          [...page.entries].reverse().map((row) => [row.id, row.titles])
        )
        const events = yield* sse.waitFor((all) => all.length >= page.entries.length)
        const streamed = events.map((event) => Schema.decodeUnknownSync(FeedEntry)(event.data))
        expect(streamed.map((row) => row.titles)).toEqual(page.entries.map((row) => row.titles))
        yield* sse.close
        const story = Schema.decodeUnknownSync(CorrelationView)(
          (yield* client.get(`/api/audit/correlation/${counted?.correlationId}`)).body
        )
        const rows = story.groups.flatMap((group) => group.entries)
        expect(rows.length).toBeGreaterThan(1)
        for (const row of rows) expect(row.titles?.[row.businessObjectId]?.title).toBeTypeOf("string")
        expect(closed.body.titles).toEqual({ [acme.id]: { title: "Acme", deleted: false } })
      })
  )

  it.effect(
    "the definitions: labels, title rules, action labels; the plugins' labels for actors, jobs and actions",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { cookie } = yield* signedInMember(base, workspace)
        const list = Schema.decodeUnknownSync(BusinessObjectList)(
          (yield* clientFor(base, cookie).get("/api/business-objects")).body
        )
        const dealDefinition = list.businessObjects.find((definition) => definition.name === deal)
        expect(dealDefinition).toMatchObject({
          label: "Deal",
          title: "title",
          actionLabels: { close: "Close deal", "follow-up": "Follow up" }
        })
        expect(list.labels?.actors).toMatchObject({
          "seeder:crm": "Seed data (CRM)",
          "workflow:crm/note-archived-deal": "Workflow: Note on archived deals"
        })
        expect(list.labels?.jobs).toMatchObject({ "crm/follow-up": "Follow-up activity" })
        expect(list.labels?.actions).toMatchObject({ "crm/deal/close": "Close deal" })
        expect(list.labels?.listeners).toMatchObject({ "crm/count-won-deals": "Count won deals on the company" })
      })
  )
})
