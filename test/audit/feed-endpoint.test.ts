import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect, Fiber, Schema } from "effect"
import { CorrelationView, FeedEntry, FeedPage } from "../../src/api/Feed"
import type { Workspace } from "../../src/api/Workspace"
import { decodeFeedCursor, encodeFeedCursor } from "../../src/audit/FeedCursor"
import { Roles } from "../../src/auth/Roles"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { clientFor, createRecord, recordsOf, signedInMember } from "../support/api"
import type { Client } from "../support/api"
import { request } from "../support/http"
import { openSse } from "../support/sse"
import { ApiError, createClient } from "../../src/client"
import { browserFetch } from "../support/browserFetch"
import { baseUrl, freshUser, freshWorkspace, TestApp, testPassword } from "../support/TestApp"

const deal = "crm/deal"
const company = "crm/company"

const decodePage = Schema.decodeUnknownSync(FeedPage)

/** A feed page as answered (status and body), asked by path and query. */
const feedCall = (client: Client, query: string) => client.get(`/api/audit/feed${query}`)

const feedPage = (client: Client, query: string) =>
  Effect.map(feedCall(client, query), (answer) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return decodePage(answer.body)
  })

/** Every page from `cursor` (none: the start) until `more` is false; the entries and the last cursor. */
const readAll = (client: Client, query: string, limit: number, cursor?: string) =>
  Effect.gen(function* () {
    const entries: Array<FeedEntry> = []
    let next = cursor
    for (let pages = 0; ; pages++) {
      if (pages > 1_000) throw new Error("the feed does not end")
      const page = yield* feedPage(
        client,
        `?limit=${limit}${next === undefined ? "" : `&cursor=${next}`}${query === "" ? "" : `&${query}`}`
      )
      entries.push(...page.entries)
      next = page.nextCursor
      if (!page.more) return { entries, cursor: next }
    }
  })

/** The workspace's rows as the database orders them: position. */
const databaseOrder = (workspace: Workspace) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.map(
      sql<{ readonly id: string; readonly businessObject: string; readonly position: string }>`
        SELECT e.id::text AS id, e.business_object, e.position::text AS position
        FROM ${sql(workspace.table("audit_entries"))} AS e ORDER BY e.position`,
      (rows) => rows
    )
  )

layer(TestApp, { excludeTestServices: true })("GET /api/audit/feed", (it) => {
  it.effect("oldest first in position order, every row once across pages, each entry's cursor resumes after it", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const acme = yield* createRecord(client, company, { name: "Acme" })
      for (let i = 0; i < 5; i++) {
        const made = yield* createRecord(client, deal, { title: `Deal ${i}`, stage: "lead" })
        yield* recordsOf(client, deal).update(made.id, { title: `Deal ${i}!` })
      }
      const expected = yield* databaseOrder(workspace)
      expect(expected.length).toBeGreaterThanOrEqual(11)

      const { entries, cursor } = yield* readAll(client, "", 3)
      expect(entries.map((entry) => entry.id)).toEqual(expected.map((row) => row.id))
      expect(entries[0]?.businessObjectId).toBe(acme.id)
      // The entry's cursor is the feed just after it.
      const third = entries[2]
      if (third === undefined) throw new Error("no third entry")
      const after = yield* feedPage(client, `?cursor=${third.cursor}&limit=500`)
      expect(after.entries.map((entry) => entry.id)).toEqual(expected.slice(3).map((row) => row.id))

      // Caught up: the same cursor again, nothing; a new row, then exactly it.
      const idle = yield* feedPage(client, `?cursor=${cursor}`)
      expect(idle).toEqual(new FeedPage({ entries: [], nextCursor: cursor, more: false }))
      const later = yield* createRecord(client, company, { name: "Later" })
      const news = yield* feedPage(client, `?cursor=${cursor}`)
      expect(news.entries.map((entry) => [entry.businessObjectId, entry.operation])).toEqual([[later.id, "created"]])
      // The body as sent is the contract's shape exactly.
      const raw = yield* feedCall(client, `?cursor=${cursor}`)
      expect(raw.body).toEqual(Schema.encodeSync(FeedPage)(news))
    })
  )

  it.effect("filters: business object, record, actor, correlation id, time range; all must hold", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const ann = yield* signedInMember(base, workspace)
      const bob = yield* signedInMember(base, workspace)
      const acme = yield* createRecord(ann.client, company, { name: "Acme" })
      const kiosk = yield* createRecord(bob.client, deal, { title: "Kiosk", stage: "lead" })
      yield* recordsOf(ann.client, deal).update(kiosk.id, { title: "Kiosk 2" })
      yield* recordsOf(bob.client, company).update(acme.id, { name: "Acme Inc" })
      const all = (yield* readAll(ann.client, "", 500)).entries

      const ids = (entries: ReadonlyArray<FeedEntry>) => entries.map((entry) => entry.id)
      const where = (keep: (entry: FeedEntry) => boolean) => ids(all.filter(keep))

      expect(ids((yield* readAll(ann.client, `businessObject=${encodeURIComponent(deal)}`, 2)).entries)).toEqual(
        where((entry) => entry.businessObject === deal)
      )
      expect(ids((yield* readAll(ann.client, `record=${acme.id}`, 2)).entries)).toEqual(
        where((entry) => entry.businessObjectId === acme.id)
      )
      expect(ids((yield* readAll(ann.client, `actor=${bob.user.id}`, 2)).entries)).toEqual(
        where((entry) => entry.actor.kind === "user" && entry.actor.id === bob.user.id)
      )
      expect(where((entry) => entry.actor.kind === "user" && entry.actor.id === bob.user.id)).toHaveLength(2)
      const unit = all[1]?.correlationId ?? ""
      expect(ids((yield* readAll(ann.client, `correlationId=${unit}`, 2)).entries)).toEqual(
        where((entry) => entry.correlationId === unit)
      )
      const both = `actor=${ann.user.id}&businessObject=${encodeURIComponent(company)}`
      expect(ids((yield* readAll(ann.client, both, 2)).entries)).toEqual(
        where(
          (entry) => entry.actor.kind === "user" && entry.actor.id === ann.user.id && entry.businessObject === company
        )
      )
      // Time range: from inclusive, to exclusive, on `at`.
      const middle = all[2]?.at ?? ""
      expect(ids((yield* readAll(ann.client, `from=${middle}`, 2)).entries)).toEqual(
        where((entry) => entry.at >= middle)
      )
      expect(ids((yield* readAll(ann.client, `to=${middle}`, 2)).entries)).toEqual(where((entry) => entry.at < middle))
      expect((yield* readAll(ann.client, "from=2999-01-01", 2)).entries).toEqual([])
      expect(ids((yield* readAll(ann.client, "from=2000-01-01T00:00:00%2B02:00", 2)).entries)).toEqual(ids(all))
    })
  )

  it.effect("permissions: rows the caller may not read are left out, and the cursor still moves past them", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      for (let i = 0; i < 4; i++) yield* createRecord(client, deal, { title: `Hidden ${i}`, stage: "lead" })
      const visible = yield* createRecord(client, company, { name: "Visible" })
      yield* (yield* Roles).grant(workspace, "company-reader", company, "read")
      const reader = yield* signedInMember(base, workspace, "company-reader")

      const { entries, cursor } = yield* readAll(reader.client, "", 1)
      expect(entries.map((entry) => entry.businessObject)).toEqual([company])
      expect(entries[0]?.businessObjectId).toBe(visible.id)
      // Only deals after it: the page is empty, and its cursor has passed them all.
      for (let i = 0; i < 3; i++) yield* createRecord(client, deal, { title: `Hidden too ${i}`, stage: "lead" })
      const page = yield* feedPage(reader.client, `?cursor=${cursor}`)
      expect(page.entries).toEqual([])
      const last = (yield* databaseOrder(workspace)).at(-1)
      expect(decodeFeedCursor(page.nextCursor)).toEqual(
        decodeFeedCursor(encodeFeedCursor({ position: BigInt(last?.position ?? "0") }))
      )

      const denied = yield* feedCall(reader.client, `?businessObject=${encodeURIComponent(deal)}`)
      expect(denied.status).toBe(403)
      expect(denied.body).toEqual(expect.objectContaining({ _tag: "Forbidden" }))
      // A role with no grant at all sees nothing, and still pages to the end.
      yield* (yield* Roles).grant(workspace, "nobody", "crm/activity", "read")
      const nobody = yield* signedInMember(base, workspace, "nobody")
      expect((yield* readAll(nobody.client, "", 2)).entries).toEqual([])

      const anonymous = yield* feedCall(clientFor(base, ""), "")
      expect(anonymous.status).toBe(401)
    })
  )

  it.effect("malformed cursor, filters, limit or wait: 400, naming the parameter; unknown business object: 404", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const timelineCursor = Buffer.from(JSON.stringify(["12"])).toString("base64url")
      for (const query of [
        "?cursor=junk!",
        `?cursor=${timelineCursor}`,
        `?cursor=${Buffer.from("feed:-1").toString("base64url")}`,
        `?cursor=${Buffer.from("feed:99999999999999999999").toString("base64url")}`,
        "?limit=abc",
        "?limit=1.5",
        "?wait=soon",
        "?correlationId=not-a-uuid",
        "?from=yesterday",
        "?from=2026-02-30",
        "?to=2026-01-01T25:00:00Z",
        "?from=0000-01-01",
        `?actor=${"x".repeat(201)}`,
        "?record="
      ]) {
        const answer = yield* feedCall(client, query)
        expect(answer.status, query).toBe(400)
        expect(answer.body, query).toEqual(expect.objectContaining({ message: expect.any(String) }))
      }
      const unknown = yield* feedCall(client, `?businessObject=${encodeURIComponent("crm/nothing")}`)
      expect(unknown.status).toBe(404)
      // Out of range is clamped, not refused (as on timelines).
      expect((yield* feedCall(client, "?limit=100000")).status).toBe(200)
      expect((yield* feedCall(client, "?limit=0")).status).toBe(200)
      const sse = yield* request(`${base}/api/audit/feed`, {
        headers: {
          cookie: (yield* signedInMember(base, workspace)).cookie,
          accept: "text/event-stream",
          "last-event-id": "junk"
        }
      })
      expect(sse.status).toBe(400)
    })
  )

  it.effect("SSE: entries as they commit, `id:` the cursor; a reconnect with Last-Event-ID goes on from there", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client, cookie } = yield* signedInMember(base, workspace)
      const { cursor } = yield* readAll(client, "", 500)
      const url = `${base}/api/audit/feed?cursor=${cursor}`
      const bus = yield* BroadcastBus
      const subscribedBefore = yield* bus.subscriberCount
      const first = yield* openSse(url, { cookie, accept: "text/event-stream" })
      expect(first.status).toBe(200)
      expect(first.headers.get("content-type")).toContain("text/event-stream")
      const made = []
      for (let i = 0; i < 3; i++) made.push((yield* createRecord(client, company, { name: `Streamed ${i}` })).id)
      const seen = yield* first.waitFor((events) => events.length >= 3)
      const entries = seen.map((event) => Schema.decodeUnknownSync(FeedEntry)(event.data))
      expect(seen.map((event) => event.event)).toEqual(["entry", "entry", "entry"])
      expect(entries.map((entry) => entry.businessObjectId)).toEqual(made)
      // `id:` of each event is the entry's cursor.
      const ids = [...(yield* first.raw).matchAll(/^id: (.+)$/gm)].map((match) => match[1])
      expect(ids).toEqual(entries.map((entry) => entry.cursor))
      yield* first.close
      // The closed stream let go of its wake-up subscription.
      while ((yield* bus.subscriberCount) > subscribedBefore) yield* Effect.sleep("10 millis")

      const again = yield* openSse(url, {
        cookie,
        accept: "text/event-stream",
        "last-event-id": entries[0]?.cursor ?? ""
      })
      const resumed = yield* again.waitFor((events) => events.length >= 2)
      expect(resumed.map((event) => Schema.decodeUnknownSync(FeedEntry)(event.data).businessObjectId)).toEqual(
        made.slice(1)
      )
    })
  )

  it.effect(
    "SSE: a sign-out ends the stream (end: signed-out), a role change too (end: role-changed); the reconnect is answered under what the caller holds now",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client: admin } = yield* signedInMember(base, workspace)
        const { cursor } = yield* readAll(admin, "", 500)
        const url = `${base}/api/audit/feed?cursor=${cursor}`
        yield* (yield* Roles).grant(workspace, "deal-reader", deal, "read")

        const leaving = yield* signedInMember(base, workspace, "deal-reader")
        const signedOut = yield* openSse(url, { cookie: leaving.cookie, accept: "text/event-stream" })
        const d1 = yield* createRecord(admin, deal, { title: "Seen before the sign-out" })
        yield* signedOut.waitFor((events) => events.length >= 1)
        expect((yield* leaving.client.post("/api/auth/logout")).status).toBe(204)
        yield* createRecord(admin, deal, { title: "Committed after the sign-out" })
        yield* signedOut.ended
        const afterSignOut = yield* signedOut.events
        expect(afterSignOut.map((event) => event.event)).toEqual(["entry", "end"])
        expect(Schema.decodeUnknownSync(FeedEntry)(afterSignOut[0]?.data).businessObjectId).toBe(d1.id)
        expect(afterSignOut.at(-1)?.data).toEqual({ reason: "signed-out" })
        expect((yield* openSse(url, { cookie: leaving.cookie, accept: "text/event-stream" })).status).toBe(401)

        const promoted = yield* signedInMember(base, workspace, "deal-reader")
        const before = yield* openSse(url, { cookie: promoted.cookie, accept: "text/event-stream" })
        yield* before.waitFor((events) => events.length >= 2)
        expect((yield* admin.put(`/api/members/${promoted.user.id}/role`, { role: "admin" })).status).toBe(200)
        const c1 = yield* createRecord(admin, company, { name: "Readable once promoted" })
        yield* before.ended
        expect((yield* before.events).at(-1)).toEqual({ event: "end", data: { reason: "role-changed" } })
        // Back with Last-Event-ID (as an EventSource comes back): the company it could not read before is there now.
        const after = yield* openSse(url, { cookie: promoted.cookie, accept: "text/event-stream" })
        const seen = yield* after.waitFor((events) =>
          events.some((event) => Schema.decodeUnknownSync(FeedEntry)(event.data).businessObjectId === c1.id)
        )
        expect(seen.length).toBeGreaterThan(0)
      })
  )

  it.effect("long-poll: a caller signed out while waiting gets 401, not the rows committed after", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client: admin } = yield* signedInMember(base, workspace)
      const { cursor } = yield* readAll(admin, "", 500)
      const leaving = yield* signedInMember(base, workspace)
      const bus = yield* BroadcastBus
      const subscribedBefore = yield* bus.subscriberCount
      const waiting = yield* Effect.forkChild(feedCall(leaving.client, `?cursor=${cursor}&wait=30`))
      // Waiting: its wake-up subscription is there.
      while ((yield* bus.subscriberCount) <= subscribedBefore) yield* Effect.sleep("10 millis")
      expect((yield* leaving.client.post("/api/auth/logout")).status).toBe(204)
      yield* createRecord(admin, deal, { title: "Committed after the sign-out" })
      const answer = yield* Fiber.join(waiting)
      expect(answer.status).toBe(401)
    })
  )

  it.effect("NDJSON: every row after the cursor as one JSON line each, the same entries as the pages", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client, cookie } = yield* signedInMember(base, workspace)
      for (let i = 0; i < 7; i++) yield* createRecord(client, company, { name: `Exported ${i}` })
      const pages = (yield* readAll(client, `businessObject=${encodeURIComponent(company)}`, 2)).entries
      const response = yield* Effect.promise(() =>
        fetch(`${base}/api/audit/feed?businessObject=${encodeURIComponent(company)}`, {
          headers: { cookie, accept: "application/x-ndjson" }
        })
      )
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("application/x-ndjson")
      const text = yield* Effect.promise(() => response.text())
      expect(text.endsWith("\n")).toBe(true)
      const lines = text
        .trimEnd()
        .split("\n")
        .map((line) => Schema.decodeUnknownSync(Schema.fromJsonString(FeedEntry))(line))
      // The export is the rows as stored: without the titles (today's names) a page carries beside them.
      expect(lines).toEqual(pages.map(({ titles: _titles, ...row }) => new FeedEntry(row)))
    })
  )

  it.effect("long-poll: a request with `wait` answers as soon as a row commits", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const { cursor } = yield* readAll(client, "", 500)
      const waiting = yield* Effect.forkChild(feedPage(client, `?cursor=${cursor}&wait=30`))
      const made = yield* createRecord(client, company, { name: "Awaited" })
      const page = yield* Fiber.join(waiting)
      expect(page.entries.map((entry) => entry.businessObjectId)).toContain(made.id)
    })
  )
})

layer(TestApp, { excludeTestServices: true })("GET /api/audit/correlation/:id", (it) => {
  it.effect(
    "every row of a unit and its cascade, grouped by unit and cause, permission-filtered; 400 for a non-UUID",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client } = yield* signedInMember(base, workspace)
        const acme = yield* createRecord(client, company, { name: "Acme", wonDeals: 0 })
        const kiosk = yield* createRecord(client, deal, { title: "Kiosk", stage: "open", company: acme.id })
        // close: deal -> company (event cause) -> activity: one unit, several causes.
        yield* client.post(`/api/actions/crm/deal/close`, { id: kiosk.id })
        const all = (yield* readAll(client, "", 500)).entries
        const closing = all.filter((entry) => entry.cause?.kind === "action").at(0)
        if (closing === undefined) throw new Error("the close action wrote no row")
        const unitRows = all.filter((entry) => entry.correlationId === closing.correlationId)
        expect(unitRows.length).toBeGreaterThan(1)

        const answer = yield* client.get(`/api/audit/correlation/${closing.correlationId}`)
        expect(answer.status).toBe(200)
        const view = Schema.decodeUnknownSync(CorrelationView)(answer.body)
        expect(view.truncated).toBe(false)
        const flat = view.groups.flatMap((group) => group.entries.map((entry) => entry.id))
        expect(new Set(flat)).toEqual(new Set(unitRows.map((entry) => entry.id)))
        for (const group of view.groups) {
          for (const entry of group.entries) expect(entry.cause).toEqual(group.cause)
        }
        expect(new Set(view.groups.map((group) => JSON.stringify(group.cause))).size).toBe(view.groups.length)

        yield* (yield* Roles).grant(workspace, "deal-reader", deal, "read")
        const reader = yield* signedInMember(base, workspace, "deal-reader")
        const filtered = Schema.decodeUnknownSync(CorrelationView)(
          (yield* reader.client.get(`/api/audit/correlation/${closing.correlationId}`)).body
        )
        expect(filtered.groups.flatMap((group) => group.entries.map((entry) => entry.businessObject))).toEqual(
          unitRows.filter((entry) => entry.businessObject === deal).map(() => deal)
        )
        expect((yield* client.get("/api/audit/correlation/not-a-uuid")).status).toBe(400)
        const none = yield* client.get(`/api/audit/correlation/${crypto.randomUUID()}`)
        expect(none.body).toEqual({ correlationId: expect.any(String), groups: [], truncated: false })
      })
  )

  it.effect("the cascade: a workflow run's rows are in the view of the unit whose event started it", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const kiosk = yield* createRecord(client, deal, { title: "Kiosk", stage: "lead" })
      const { cursor } = yield* readAll(client, "", 500)
      yield* recordsOf(client, deal).archive(kiosk.id)
      const archived = (yield* feedPage(client, `?cursor=${cursor}&record=${kiosk.id}`)).entries[0]
      if (archived === undefined) throw new Error("no archived row")
      // The workflow writes later, in a unit of its own, as workflow:crm/note-archived-deal.
      const workflowRows = yield* feedPage(
        client,
        `?cursor=${cursor}&actor=${encodeURIComponent("workflow:crm/note-archived-deal")}&wait=30`
      )
      const noted = workflowRows.entries[0]
      if (noted === undefined) throw new Error("the workflow wrote nothing")
      expect(noted.correlationId).not.toBe(archived.correlationId)

      const view = Schema.decodeUnknownSync(CorrelationView)(
        (yield* client.get(`/api/audit/correlation/${archived.correlationId}`)).body
      )
      expect(
        view.groups.map((group) => [group.correlationId, group.parentCorrelationId, group.entries.map((e) => e.id)])
      ).toEqual([
        [archived.correlationId, null, [archived.id]],
        [noted.correlationId, archived.correlationId, [noted.id]]
      ])
    })
  )

  it.effect(
    "the typed client: audit.feed pages with filters and cursors, audit.correlation; a bad cursor is a 400 ApiError",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const user = yield* freshUser({ workspace, role: "admin" })
        const client = createClient({ baseUrl: base, fetch: browserFetch() })
        yield* Effect.promise(() =>
          client.auth.login({ workspace: workspace.slug, email: user.email, password: testPassword })
        )
        const made = yield* Effect.promise(() => client.records.create(company, { name: "Typed" }))
        const first = yield* Effect.promise(() => client.audit.feed({ record: made.id, limit: 1 }))
        expect(first).toBeInstanceOf(FeedPage)
        expect(first.entries.map((entry) => [entry.businessObjectId, entry.operation])).toEqual([[made.id, "created"]])
        yield* Effect.promise(() => client.records.update(company, made.id, { name: "Typed 2" }))
        const next = yield* Effect.promise(() =>
          client.audit.feed({ record: made.id, cursor: first.nextCursor, wait: 5 })
        )
        expect(next.entries.map((entry) => entry.operation)).toEqual(["updated"])
        const view = yield* Effect.promise(() => client.audit.correlation(next.entries[0]?.correlationId ?? ""))
        expect(view.groups.flatMap((group) => group.entries.map((entry) => entry.id))).toEqual([next.entries[0]?.id])
        const refused = yield* Effect.promise(() =>
          client.audit.feed({ cursor: "nope" }).then(
            () => undefined,
            (error: unknown) => error
          )
        )
        expect(refused).toBeInstanceOf(ApiError)
        expect(refused).toMatchObject({ status: 400 })
      })
  )
})
