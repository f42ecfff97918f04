import { AppConfig, redisPrefixOf } from "../../src/config/AppConfig"
import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Layer, Schedule } from "effect"
import { Roles } from "../../src/auth/Roles"
import * as PresenceStoreRedis from "../../src/presence/PresenceStoreRedis"
import { RedisConnection } from "../../src/redis/RedisConnection"
import type { Workspace } from "../../src/api/Workspace"
import { baseUrl, freshWorkspace, testApp, TestApp, testRedisUrl } from "../support/TestApp"
import { typeParams } from "../../src/client/pathParams"
import { clientFor, createRecord, recordsOf, signedInMember } from "../support/api"
import type { Client } from "../support/api"
import { settled } from "../support/apiCaller"
import type { SseEvent, SseStream } from "../support/sse"
import { openSse } from "../support/sse"

/**
 * The presence routes over real HTTP, a real SSE stream and real Redis, one
 * test per row of the spec's presence state table plus the permission rules.
 *
 * "Nothing is broadcast" is proven, not waited for: every presence publish
 * happens before its route answers, and all hints travel one Redis channel in
 * order, so a later save's `changed` hint closes a window that holds every
 * hint the actions before it sent.
 */

const deal = "crm/deal"
const company = "crm/company"
const businessObjects = [deal, company, "crm/activity"]

/** The presence routes as one caller calls them: every answer, 2xx or not, as `{ status, body }`. */
const presenceClient = (client: Client) => {
  const editorPath = (id: string, editor: string, businessObject: string) =>
    // As they are: the client percent-encodes each path parameter itself.
    ({ ...typeParams(businessObject), id, editor })
  const list = (businessObject: string) =>
    client.call((api) => api.presence.list({ params: typeParams(businessObject) }))
  return {
    heartbeat: (recordId: string, editor: string, businessObject = deal) =>
      settled(client.call((api) => api.presence.heartbeat({ params: editorPath(recordId, editor, businessObject) }))),
    leave: (recordId: string, editor: string, businessObject = deal) =>
      settled(client.call((api) => api.presence.leave({ params: editorPath(recordId, editor, businessObject) }))),
    list: (businessObject = deal) => settled(list(businessObject)),
    /** The listing, which must be a 200 of exactly `{records}`; each record's editors sorted by id. */
    editors: (businessObject = deal) =>
      Effect.map(list(businessObject), (answer) => {
        expect(answer.json).toEqual({ records: answer.body.records })
        return Object.fromEntries(
          Object.entries(answer.body.records).map(([id, editors]) => [
            id,
            [...editors].sort((a, b) => a.id.localeCompare(b.id))
          ])
        )
      })
  }
}

/** A member of the workspace, signed in, with its presence routes. */
const member = (base: string, workspace: Workspace, role = "admin") =>
  Effect.map(signedInMember(base, workspace, role), (m) => ({ ...m, presence: presenceClient(m.client) }))

/** A fresh workspace whose presence keys are deleted from Redis before the workspace is dropped. */
const presenceWorkspace = Effect.gen(function* () {
  const workspace = yield* freshWorkspace
  const { command } = yield* RedisConnection
  const prefix = redisPrefixOf(yield* AppConfig)
  const keys = businessObjects.flatMap((bo) => Object.values(PresenceStoreRedis.presenceKeys(prefix, workspace.id, bo)))
  yield* Effect.addFinalizer(() => Effect.promise(() => command.del(...keys)))
  return workspace
})

const presenceHint = (businessObjectId: string, businessObject = deal): SseEvent => ({
  event: "presence",
  data: { businessObject, businessObjectId }
})

/** A broadcast stream opened with a session cookie; the stream is subscribed once it answers. */
const openStream = (base: string, cookie: string) =>
  Effect.tap(openSse(`${base}/api/broadcast`, { cookie }), (sse) => Effect.sync(() => expect(sse.status).toBe(200)))

/**
 * Saves a new company (a known hint) and waits for its `changed` hint. Returns
 * the events received from index `from` up to, not including, that hint, and
 * the index just after it (the start of the next window).
 */
const closeWindow = (sse: SseStream, client: Client, from: number) =>
  Effect.gen(function* () {
    const marker = yield* createRecord(client, company, { name: "window marker" })
    const isMarker = (e: SseEvent) =>
      e.event === "changed" &&
      JSON.stringify(e.data) === JSON.stringify({ businessObject: company, businessObjectId: marker.id })
    const all = yield* sse.waitFor((events) => events.slice(from).some(isMarker), "10 seconds")
    const at = from + all.slice(from).findIndex(isMarker)
    return { window: all.slice(from, at), next: at + 1 }
  })

const expectForbidden = (response: { status: number; body: unknown }) => {
  expect(response.status).toBe(403)
  expect(response.body).toMatchObject({ _tag: "Forbidden" })
}

const routes = Layer.merge(TestApp, RedisConnection.layer(testRedisUrl))

layer(routes, { excludeTestServices: true })("presence routes (HTTP, SSE, Redis)", (it) => {
  it.effect("absent --heartbeat--> present: 204, a presence hint, listed as {id, name}", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* presenceWorkspace
      const { client, cookie, user, presence } = yield* member(base, workspace)
      const record = yield* createRecord(client, deal, { title: "Kiosk" })
      const sse = yield* openStream(base, cookie)
      const { next } = yield* closeWindow(sse, client, 0)

      expect(yield* presence.editors()).toEqual({})
      const put = yield* presence.heartbeat(record.id, "form-1")
      expect(put.status).toBe(204)
      expect(put.body).toBeUndefined()

      const { window } = yield* closeWindow(sse, client, next)
      expect(window).toEqual([presenceHint(record.id)])
      expect(yield* presence.editors()).toEqual({ [record.id]: [{ id: "form-1", name: user.name, userId: user.id }] })
    })
  )

  it.effect("present --heartbeat, same editor--> present, renewed: 204 and nothing broadcast", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* presenceWorkspace
      const { client, cookie, user, presence } = yield* member(base, workspace)
      const record = yield* createRecord(client, deal, { title: "Kiosk" })
      const sse = yield* openStream(base, cookie)
      const baseline = yield* closeWindow(sse, client, 0)

      expect((yield* presence.heartbeat(record.id, "form-1")).status).toBe(204)
      const arrival = yield* closeWindow(sse, client, baseline.next)
      expect(arrival.window).toEqual([presenceHint(record.id)])

      for (let i = 0; i < 3; i++) expect((yield* presence.heartbeat(record.id, "form-1")).status).toBe(204)
      // The save's hint is the very next event: the renewals sent none.
      const renewals = yield* closeWindow(sse, client, arrival.next)
      expect(renewals.window).toEqual([])
      expect(yield* presence.editors()).toEqual({ [record.id]: [{ id: "form-1", name: user.name, userId: user.id }] })
    })
  )

  it.effect(
    "present --DELETE--> absent: 204, a presence hint, no longer listed; DELETE of an absent editor: 204, silent",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* presenceWorkspace
        const { client, cookie, presence } = yield* member(base, workspace)
        const record = yield* createRecord(client, deal, { title: "Kiosk" })
        const sse = yield* openStream(base, cookie)
        expect((yield* presence.heartbeat(record.id, "form-1")).status).toBe(204)
        const arrival = yield* closeWindow(sse, client, 0)
        expect(arrival.window.filter((e) => e.event === "presence")).toEqual([presenceHint(record.id)])

        const del = yield* presence.leave(record.id, "form-1")
        expect(del.status).toBe(204)
        expect(del.body).toBeUndefined()
        const departure = yield* closeWindow(sse, client, arrival.next)
        expect(departure.window).toEqual([presenceHint(record.id)])
        expect(yield* presence.editors()).toEqual({})

        // Absent already (left), and never seen at all: both 204, neither broadcasts.
        expect((yield* presence.leave(record.id, "form-1")).status).toBe(204)
        expect((yield* presence.leave(record.id, "never-seen")).status).toBe(204)
        const absent = yield* closeWindow(sse, client, departure.next)
        expect(absent.window).toEqual([])
        expect(yield* presence.editors()).toEqual({})
      })
  )

  it.effect(
    "an editor id held by another user: PUT and DELETE by someone else are 403; the holder stays; nothing broadcast",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* presenceWorkspace
        const holder = yield* member(base, workspace)
        const other = yield* member(base, workspace)
        const record = yield* createRecord(holder.client, deal, { title: "Kiosk" })
        const sse = yield* openStream(base, holder.cookie)
        expect((yield* holder.presence.heartbeat(record.id, "form-1")).status).toBe(204)
        const arrival = yield* closeWindow(sse, holder.client, 0)

        expectForbidden(yield* other.presence.heartbeat(record.id, "form-1"))
        expectForbidden(yield* other.presence.leave(record.id, "form-1"))
        const refused = yield* closeWindow(sse, holder.client, arrival.next)
        expect(refused.window).toEqual([])
        const listed = { [record.id]: [{ id: "form-1", name: holder.user.name, userId: holder.user.id }] }
        expect(yield* holder.presence.editors()).toEqual(listed)
        expect(yield* other.presence.editors()).toEqual(listed)

        // The holder itself still renews (silently) and leaves (announced).
        expect((yield* holder.presence.heartbeat(record.id, "form-1")).status).toBe(204)
        expect((yield* holder.presence.leave(record.id, "form-1")).status).toBe(204)
        const left = yield* closeWindow(sse, holder.client, refused.next)
        expect(left.window).toEqual([presenceHint(record.id)])
      })
  )

  it.effect(
    "two users and two tabs of one user are three editors; GET groups by record, one business object, one workspace",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* presenceWorkspace
        const otherWorkspace = yield* presenceWorkspace
        const alice = yield* member(base, workspace)
        const bob = yield* member(base, workspace)
        const carol = yield* member(base, otherWorkspace)
        const r1 = yield* createRecord(alice.client, deal, { title: "One" })
        const r2 = yield* createRecord(alice.client, deal, { title: "Two" })
        const acme = yield* createRecord(alice.client, company, { name: "Acme" })
        const elsewhere = yield* createRecord(carol.client, deal, { title: "Elsewhere" })
        const sse = yield* openStream(base, alice.cookie)
        const baseline = yield* closeWindow(sse, alice.client, 0)

        for (const response of [
          yield* alice.presence.heartbeat(r1.id, "alice-tab-1"),
          yield* alice.presence.heartbeat(r1.id, "alice-tab-2"),
          yield* bob.presence.heartbeat(r1.id, "bob-tab"),
          yield* alice.presence.heartbeat(r2.id, "alice-tab-3"),
          // Another business object of the same workspace.
          yield* alice.presence.heartbeat(acme.id, "alice-company-tab", company),
          // Another workspace, the same editor id.
          yield* carol.presence.heartbeat(elsewhere.id, "alice-tab-1")
        ]) {
          expect(response.status).toBe(204)
        }

        const expected = {
          [r1.id]: [
            { id: "alice-tab-1", name: alice.user.name, userId: alice.user.id },
            { id: "alice-tab-2", name: alice.user.name, userId: alice.user.id },
            { id: "bob-tab", name: bob.user.name, userId: bob.user.id }
          ],
          [r2.id]: [{ id: "alice-tab-3", name: alice.user.name, userId: alice.user.id }]
        }
        expect(yield* alice.presence.editors()).toEqual(expected)
        expect(yield* bob.presence.editors()).toEqual(expected)
        expect(yield* alice.presence.editors(company)).toEqual({
          [acme.id]: [{ id: "alice-company-tab", name: alice.user.name, userId: alice.user.id }]
        })
        expect(yield* carol.presence.editors()).toEqual({
          [elsewhere.id]: [{ id: "alice-tab-1", name: carol.user.name, userId: carol.user.id }]
        })
        expect(yield* carol.presence.editors(company)).toEqual({})

        // Every arrival in this workspace was announced, once each; the other workspace's was not.
        const { window } = yield* closeWindow(sse, alice.client, baseline.next)
        expect(window).toEqual([
          presenceHint(r1.id),
          presenceHint(r1.id),
          presenceHint(r1.id),
          presenceHint(r2.id),
          presenceHint(acme.id, company)
        ])
      })
  )

  it.effect(
    "a heartbeat on a record that does not exist (or lives in another workspace) is a 404 and announces nothing",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* presenceWorkspace
        const otherWorkspace = yield* presenceWorkspace
        const alice = yield* member(base, workspace)
        const carol = yield* member(base, otherWorkspace)
        const foreign = yield* createRecord(carol.client, deal, { title: "Not yours" })
        const sse = yield* openStream(base, alice.cookie)
        const baseline = yield* closeWindow(sse, alice.client, 0)
        for (const recordId of ["00000000-0000-4000-8000-000000000000", "not-a-uuid", foreign.id]) {
          const response = yield* alice.presence.heartbeat(recordId, "alice-tab")
          expect(response.status, recordId).toBe(404)
          expect(response.body).toMatchObject({ _tag: "NotFound" })
        }
        expect(yield* alice.presence.editors()).toEqual({})
        const { window } = yield* closeWindow(sse, alice.client, baseline.next)
        expect(window).toEqual([])
      })
  )

  it.effect("permissions: PUT/DELETE need update, GET needs read; a refused call changes and broadcasts nothing", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* presenceWorkspace
      yield* (yield* Roles).grant(workspace, "deal-reader", deal, "read")
      yield* (yield* Roles).grant(workspace, "company-editor", company, "update")
      const admin = yield* member(base, workspace)
      const reader = yield* member(base, workspace, "deal-reader")
      const companyEditor = yield* member(base, workspace, "company-editor")
      const nobody = yield* member(base, workspace, "")
      const record = yield* createRecord(admin.client, deal, { title: "Kiosk" })
      const acme = yield* createRecord(admin.client, company, { name: "Acme" })
      const sse = yield* openStream(base, admin.cookie)
      expect((yield* admin.presence.heartbeat(record.id, "admin-tab")).status).toBe(204)
      const arrival = yield* closeWindow(sse, admin.client, 0)

      // Read only: may list, may neither heartbeat nor leave (not even another's editor).
      expectForbidden(yield* reader.presence.heartbeat(record.id, "reader-tab"))
      expectForbidden(yield* reader.presence.leave(record.id, "reader-tab"))
      expectForbidden(yield* reader.presence.leave(record.id, "admin-tab"))
      const listed = { [record.id]: [{ id: "admin-tab", name: admin.user.name, userId: admin.user.id }] }
      expect(yield* reader.presence.editors()).toEqual(listed)

      // Update on another business object only: nothing on this one.
      expectForbidden(yield* companyEditor.presence.heartbeat(record.id, "company-editor-tab"))
      expectForbidden(yield* companyEditor.presence.list())
      expect((yield* companyEditor.presence.heartbeat(acme.id, "company-editor-tab", company)).status).toBe(204)
      expect(yield* companyEditor.presence.editors(company)).toEqual({
        [acme.id]: [{ id: "company-editor-tab", name: companyEditor.user.name, userId: companyEditor.user.id }]
      })

      // No grant at all.
      expectForbidden(yield* nobody.presence.list())
      expectForbidden(yield* nobody.presence.list(company))
      expectForbidden(yield* nobody.presence.heartbeat(record.id, "nobody-tab"))
      expectForbidden(yield* nobody.presence.leave(record.id, "admin-tab"))

      // No session at all.
      const anonymous = presenceClient(clientFor(base, ""))
      expect((yield* anonymous.list()).status).toBe(401)
      expect((yield* anonymous.heartbeat(record.id, "anon-tab")).status).toBe(401)

      expect(yield* admin.presence.editors()).toEqual(listed)
      const refused = yield* closeWindow(sse, admin.client, arrival.next)
      // The company editor's arrival is the only hint.
      expect(refused.window).toEqual([presenceHint(acme.id, company)])
    })
  )

  it.effect("an unknown business object is a 404 on every presence route", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* presenceWorkspace
      const { presence } = yield* member(base, workspace)
      for (const bo of ["crm/nope", "nope/deal"]) {
        for (const response of [
          yield* presence.heartbeat("r1", "form-1", bo),
          yield* presence.leave("r1", "form-1", bo),
          yield* presence.list(bo)
        ]) {
          expect(response.status).toBe(404)
          expect(response.body).toMatchObject({ _tag: "NotFound" })
        }
      }
    })
  )

  /** Each bad editor id gets a 400 `BadRequest` on PUT and on DELETE, and nothing is listed or broadcast. */
  const refusesEditorIds = (bad: ReadonlyArray<string>) =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* presenceWorkspace
      const { client, cookie, presence } = yield* member(base, workspace)
      const record = yield* createRecord(client, deal, { title: "Kiosk" })
      const sse = yield* openStream(base, cookie)
      const baseline = yield* closeWindow(sse, client, 0)

      for (const editor of bad) {
        for (const response of [
          yield* presence.heartbeat(record.id, editor),
          yield* presence.leave(record.id, editor)
        ]) {
          expect({ editor, status: response.status }).toEqual({ editor, status: 400 })
          expect(response.body).toMatchObject({ _tag: "BadRequest" })
        }
      }
      expect(yield* presence.editors()).toEqual({})
      const refused = yield* closeWindow(sse, client, baseline.next)
      expect(refused.window).toEqual([])
      return { record, presence }
    })

  it.effect("a bad editor id (a '/', a space, a '.', a '%', non-ASCII) is a 400 on PUT and DELETE", () =>
    Effect.gen(function* () {
      const { presence, record } = yield* refusesEditorIds([
        "a/b",
        "a b",
        "form.1",
        "éditeur",
        "a%2Fb",
        "tab?x=1",
        "tab#1"
      ])
      // 100 letters, digits, '-' and '_' are a good editor id.
      const longest = "A-z_9".repeat(20)
      expect(longest).toHaveLength(100)
      expect((yield* presence.heartbeat(record.id, longest)).status).toBe(204)
      expect(
        Object.values(yield* presence.editors())
          .flat()
          .map((e) => e.id)
      ).toEqual([longest])
    })
  )

  it.effect("an editor id over 100 characters (101, 200) is a 400 on PUT and DELETE", () =>
    Effect.asVoid(refusesEditorIds(["x".repeat(101), "x".repeat(200)]))
  )

  it.effect(
    "heartbeats sent at once on many records (one missing, one archived, one new editor twice): each its own answer, one hint per arrival, renewals silent",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* presenceWorkspace
        const { client, cookie, user, presence } = yield* member(base, workspace)
        const records = yield* Effect.all(
          Array.from({ length: 6 }, (_, i) => createRecord(client, deal, { title: `Desk ${i}` }))
        )
        const shelved = yield* createRecord(client, deal, { title: "Shelved" })
        yield* recordsOf(client, deal).archive(shelved.id)
        const missing = "00000000-0000-4000-8000-000000000000"
        const sse = yield* openStream(base, cookie)
        const baseline = yield* closeWindow(sse, client, 0)

        // Six records with one editor each, the first one's editor twice, a missing and an archived record.
        const beats = [
          ...records.map((record, i) => ({ recordId: record.id, editor: `desk-${i}` })),
          { recordId: records[0]?.id ?? "", editor: "desk-0" },
          { recordId: missing, editor: "ghost" },
          { recordId: shelved.id, editor: "shelf" }
        ]
        const first = yield* Effect.all(
          beats.map((beat) => presence.heartbeat(beat.recordId, beat.editor)),
          { concurrency: "unbounded" }
        )
        expect(first.map((r) => r.status)).toEqual([204, 204, 204, 204, 204, 204, 204, 404, 409])
        const arrivals = yield* closeWindow(sse, client, baseline.next)
        // Only presence hints count here: the `changed` hints of the setup's saves may still be on their way.
        const presenceIn = (window: ReadonlyArray<SseEvent>) =>
          window.filter((e) => e.event === "presence").map((e) => JSON.stringify(e.data))
        expect(presenceIn(arrivals.window).sort()).toEqual(
          records.map((r) => JSON.stringify(presenceHint(r.id).data)).sort()
        )

        const second = yield* Effect.all(
          beats.map((beat) => presence.heartbeat(beat.recordId, beat.editor)),
          { concurrency: "unbounded" }
        )
        expect(second.map((r) => r.status)).toEqual([204, 204, 204, 204, 204, 204, 204, 404, 409])
        expect(presenceIn((yield* closeWindow(sse, client, arrivals.next)).window)).toEqual([])
        const listed = yield* presence.editors()
        expect(listed).toEqual(
          Object.fromEntries(
            records.map((record, i) => [record.id, [{ id: `desk-${i}`, name: user.name, userId: user.id }]])
          )
        )
      })
  )

  it.effect("20 racing heartbeats of one new editor: all 204, exactly one presence hint", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* presenceWorkspace
      const { client, cookie, user, presence } = yield* member(base, workspace)
      const record = yield* createRecord(client, deal, { title: "Kiosk" })
      const sse = yield* openStream(base, cookie)
      const baseline = yield* closeWindow(sse, client, 0)

      const responses = yield* Effect.all(
        Array.from({ length: 20 }, () => presence.heartbeat(record.id, "racing-tab")),
        { concurrency: "unbounded" }
      )
      expect(responses.map((r) => r.status)).toEqual(Array.from({ length: 20 }, () => 204))
      const { window } = yield* closeWindow(sse, client, baseline.next)
      expect(window).toEqual([presenceHint(record.id)])
      expect(yield* presence.editors()).toEqual({
        [record.id]: [{ id: "racing-tab", name: user.name, userId: user.id }]
      })
    })
  )
})

/** PRESENCE_HEARTBEAT_MS shortened to 300 ms: an editor lapses 900 ms after its last heartbeat. */
const heartbeat = Duration.millis(300)
const lapse = Duration.times(heartbeat, 3)
const shortHeartbeat = Layer.merge(testApp({ presenceHeartbeat: heartbeat }), RedisConnection.layer(testRedisUrl))

layer(shortHeartbeat, { excludeTestServices: true })("presence lapse (HTTP, SSE, Redis, 300 ms heartbeat)", (it) => {
  it.effect("present --lapse--> absent: no longer listed after three intervals, nothing broadcast", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* presenceWorkspace
      const { client, cookie, user, presence } = yield* member(base, workspace)
      const record = yield* createRecord(client, deal, { title: "Kiosk" })
      const sse = yield* openStream(base, cookie)
      const baseline = yield* closeWindow(sse, client, 0)
      const listed = { [record.id]: [{ id: "form-1", name: user.name, userId: user.id }] }

      const sentAt = Date.now()
      expect((yield* presence.heartbeat(record.id, "form-1")).status).toBe(204)
      expect(yield* presence.editors()).toEqual(listed)
      const arrival = yield* closeWindow(sse, client, baseline.next)
      expect(arrival.window).toEqual([presenceHint(record.id)])

      // Poll the listing (as a tab does) until the editor drops out; bounded.
      const goneAt = yield* presence.editors().pipe(
        Effect.flatMap((records) =>
          record.id in records ? Effect.fail("still listed" as const) : Effect.sync(() => Date.now())
        ),
        Effect.retry({ schedule: Schedule.spaced("50 millis") }),
        Effect.timeoutOrElse({
          duration: "10 seconds",
          orElse: () => Effect.fail(new Error("the editor never lapsed"))
        }),
        Effect.orDie
      )
      // The server stamped the lapse time after `sentAt`: it cannot have lapsed sooner.
      expect(goneAt - sentAt).toBeGreaterThanOrEqual(Duration.toMillis(lapse))
      expect(yield* presence.editors()).toEqual({})

      const lapsed = yield* closeWindow(sse, client, arrival.next)
      expect(lapsed.window).toEqual([])

      // Lapsed is absent: leaving is silent, the next heartbeat is an arrival again.
      expect((yield* presence.leave(record.id, "form-1")).status).toBe(204)
      expect((yield* presence.heartbeat(record.id, "form-1")).status).toBe(204)
      const again = yield* closeWindow(sse, client, lapsed.next)
      expect(again.window).toEqual([presenceHint(record.id)])
      expect(yield* presence.editors()).toEqual(listed)
    })
  )
})
