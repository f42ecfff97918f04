import { expect, layer } from "@effect/vitest"
import { Effect, Schema } from "effect"
import { FeedPage } from "../../src/api/Feed"
import type { FeedEntry } from "../../src/api/Feed"
import { Roles } from "../../src/auth/Roles"
import { createClient } from "../../src/client"
import { browserFetch } from "../support/browserFetch"
import { createRecord, recordsOf, signedInMember } from "../support/api"
import type { Client } from "../support/api"
import { fetchEventSource } from "../support/FetchEventSource"
import { request } from "../support/http"
import { baseUrl, freshUser, freshWorkspace, TestApp, testPassword } from "../support/TestApp"

/**
 * The feed read backwards (`order=newest`, `before`): what the Activity page
 * opens on. Every row once, newest first, across pages, under every filter
 * and the caller's read grants; the page's `head` is where following it
 * (oldest first, SSE) picks up what commits next.
 */

const deal = "crm/deal"
const company = "crm/company"
const decodePage = Schema.decodeUnknownSync(FeedPage)

const feedPage = (client: Client, query: string) =>
  Effect.map(client.get(`/api/audit/feed?${query}`), (answer) => {
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    return decodePage(answer.body)
  })

const ids = (entries: ReadonlyArray<FeedEntry>) => entries.map((entry) => entry.id)

/** Oldest first, every page from the start. */
const forwards = (client: Client, query: string) =>
  Effect.gen(function* () {
    const entries: Array<FeedEntry> = []
    let cursor = ""
    for (;;) {
      const page = yield* feedPage(client, `limit=500${cursor === "" ? "" : `&cursor=${cursor}`}&${query}`)
      entries.push(...page.entries)
      cursor = page.nextCursor
      if (!page.more) return entries
    }
  })

/** Newest first, every page backwards from the head; the first page's head. */
const backwards = (client: Client, query: string, limit: number) =>
  Effect.gen(function* () {
    const entries: Array<FeedEntry> = []
    let before = ""
    let head: string | undefined
    for (let pages = 0; ; pages++) {
      if (pages > 1_000) throw new Error("the feed does not end backwards")
      const page = yield* feedPage(
        client,
        `order=newest&limit=${limit}${before === "" ? "" : `&before=${before}`}&${query}`
      )
      head ??= page.head
      expect(page.head).toEqual(expect.any(String))
      entries.push(...page.entries)
      before = page.nextCursor
      if (!page.more) return { entries, head }
    }
  })

layer(TestApp, { excludeTestServices: true })("GET /api/audit/feed?order=newest", (it) => {
  it.effect("newest first across pages, under every filter: the forward feed reversed; head follows on", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const ann = yield* signedInMember(base, workspace)
      const bob = yield* signedInMember(base, workspace)
      const acme = yield* createRecord(ann.client, company, { name: "Acme" })
      for (let i = 0; i < 4; i++) {
        const made = yield* createRecord(i % 2 === 0 ? ann.client : bob.client, deal, { title: `Deal ${i}` })
        yield* recordsOf(bob.client, deal).update(made.id, { title: `Deal ${i}!` })
        yield* recordsOf(ann.client, company).update(acme.id, { name: `Acme ${i}` })
      }
      const all = yield* forwards(ann.client, "")
      expect(all.length).toBe(13)
      const middle = all[5]?.at ?? ""
      for (const query of [
        "",
        `businessObject=${encodeURIComponent(deal)}`,
        `record=${acme.id}`,
        `actor=${bob.user.id}`,
        `actor=${ann.user.id}&businessObject=${encodeURIComponent(company)}`,
        `from=${encodeURIComponent(middle)}`,
        `to=${encodeURIComponent(middle)}`,
        `correlationId=${all[3]?.correlationId ?? ""}`
      ]) {
        const expected = ids(yield* forwards(ann.client, query)).reverse()
        expect(expected.length, query).toBeGreaterThan(0)
        for (const limit of [1, 3, 100]) {
          expect(ids((yield* backwards(ann.client, query, limit)).entries), `${query} limit ${limit}`).toEqual(expected)
        }
      }

      // The head, followed oldest first, gives exactly what commits after the newest page.
      const { head, entries } = yield* backwards(ann.client, "", 2)
      expect(head).toBe(entries[0]?.cursor)
      const later = yield* createRecord(bob.client, company, { name: "Later" })
      const news = yield* feedPage(ann.client, `cursor=${head}`)
      expect(news.entries.map((entry) => [entry.businessObjectId, entry.operation])).toEqual([[later.id, "created"]])
      // An entry's cursor as `before`: the rows older than it.
      const third = entries[2]
      const older = yield* feedPage(ann.client, `order=newest&limit=500&before=${third?.cursor}`)
      expect(ids(older.entries)).toEqual(ids(all).reverse().slice(3))
    })
  )

  it.effect("only rows the caller may read, newest first; a head past rows it may not read", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client } = yield* signedInMember(base, workspace)
      const first = yield* createRecord(client, company, { name: "First" })
      for (let i = 0; i < 3; i++) yield* createRecord(client, deal, { title: `Hidden ${i}` })
      const second = yield* createRecord(client, company, { name: "Second" })
      for (let i = 0; i < 3; i++) yield* createRecord(client, deal, { title: `Hidden too ${i}` })
      yield* (yield* Roles).grant(workspace, "company-reader", company, "read")
      const reader = yield* signedInMember(base, workspace, "company-reader")

      for (const limit of [1, 2, 50]) {
        const { entries, head } = yield* backwards(reader.client, "", limit)
        expect(entries.map((entry) => entry.businessObjectId)).toEqual([second.id, first.id])
        // The head is the feed's end, past the deals after the newest company: following it starts after them.
        const all = yield* forwards(client, "")
        expect(head).toBe(all.at(-1)?.cursor)
      }
      const denied = yield* reader.client.get(`/api/audit/feed?order=newest&businessObject=${encodeURIComponent(deal)}`)
      expect(denied.status).toBe(403)
      // A workspace with no rows: an empty page, nothing more, a head at the start.
      const empty = yield* freshWorkspace
      const nobody = yield* signedInMember(base, empty)
      const page = yield* feedPage(nobody.client, "order=newest")
      expect(page.entries).toEqual([])
      expect(page.more).toBe(false)
      expect((yield* feedPage(nobody.client, `cursor=${page.head}`)).entries).toEqual([])
    })
  )

  it.effect("order, before and cursor that do not go together, or a malformed before: 400", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { client, cookie } = yield* signedInMember(base, workspace)
      yield* createRecord(client, company, { name: "Acme" })
      const { head } = yield* backwards(client, "", 10)
      for (const query of [
        "order=sideways",
        `before=${head}`,
        `order=oldest&before=${head}`,
        `order=newest&cursor=${head}`,
        "order=newest&before=junk!",
        `order=newest&before=${Buffer.from("feed:-1").toString("base64url")}`,
        "order=newest&wait=1"
      ]) {
        const answer = yield* client.get(`/api/audit/feed?${query}`)
        expect(answer.status, query).toBe(400)
        expect(answer.body, query).toEqual(expect.objectContaining({ message: expect.any(String) }))
      }
      for (const accept of ["text/event-stream", "application/x-ndjson"]) {
        const answer = yield* request(`${base}/api/audit/feed?order=newest`, { headers: { cookie, accept } })
        expect(answer.status, accept).toBe(400)
      }
    })
  )

  it.effect("the typed client: a newest-first page, then `follow` from its head hands over each new row once", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const user = yield* freshUser({ workspace, role: "admin" })
      const fetchFn = browserFetch()
      const events = fetchEventSource(fetchFn)
      const client = createClient({ baseUrl: base, fetch: fetchFn, EventSource: events.EventSource })
      yield* Effect.promise(() =>
        client.auth.login({ workspace: workspace.slug, email: user.email, password: testPassword })
      )
      const acme = yield* Effect.promise(() => client.records.create(company, { name: "Acme" }))
      yield* Effect.promise(() => client.records.create(deal, { title: "Kiosk" }))
      const page = yield* Effect.promise(() => client.audit.feed({ order: "newest", businessObject: company }))
      expect(page.entries.map((entry) => entry.businessObjectId)).toEqual([acme.id])
      const seen: Array<FeedEntry> = []
      const follow = client.audit.follow({
        cursor: page.head ?? "",
        businessObject: company,
        onEntry: (entry) => seen.push(entry)
      })
      yield* Effect.promise(async () => {
        expect(await events.instances[0]?.opened).toBe(true)
      })
      yield* Effect.promise(() => client.records.create(deal, { title: "Not a company" }))
      const beta = yield* Effect.promise(() => client.records.create(company, { name: "Beta" }))
      yield* Effect.promise(() => client.records.update(company, acme.id, { name: "Acme 2" }))
      while (seen.length < 2) yield* Effect.sleep("20 millis")
      follow.close()
      expect(seen.map((entry) => [entry.businessObjectId, entry.operation])).toEqual([
        [beta.id, "created"],
        [acme.id, "updated"]
      ])
    })
  )
})
