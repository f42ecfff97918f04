import * as Sse from "effect/encoding/Sse"
import { expect, layer } from "@effect/vitest"
import { Context, Duration, Effect, Exit, Layer, Scope } from "effect"
import { ApiKeys } from "../../src/auth/ApiKeys"
import { Roles } from "../../src/auth/Roles"
import { BroadcastEnvelope } from "../../src/broadcast/Broadcast"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import * as BroadcastHub from "../../src/broadcast/BroadcastHub"
import { baseUrl, freshWorkspace, testApp } from "../support/TestApp"
import { createRecord, recordsOf, signedInMember } from "../support/api"
import { refusal } from "../support/apiCaller"
import { openSse } from "../support/sse"
import { TestPlugins } from "../support/testPlugin"
import { awaitHint, changed, eventually, hintId, opened, probe } from "./streamHelpers"

const deal = "crm/deal"
const company = "crm/company"

/** Opens the broadcast stream of the server in context with a session cookie. */
const openStream = (cookie: string) => Effect.flatMap(baseUrl, (base) => openSse(`${base}/api/broadcast`, { cookie }))

/**
 * Opens the stream and never reads it, as a stalled tab would: the body is
 * left unconsumed, so the socket fills up and the server's writes to it wait.
 */
const openUnread = (url: string, cookie: string) =>
  Effect.gen(function* () {
    const controller = new AbortController()
    yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
    const response = yield* Effect.promise(() => fetch(url, { headers: { cookie }, signal: controller.signal }))
    return response
  })

/** Reads an SSE body until a hint about `last` arrives; the ids of the hints read, in order. */
const readUntil = (response: Response, last: string) =>
  Effect.promise(async () => {
    const ids: Array<string> = []
    let done = false
    const parser = Sse.makeParser((event) => {
      if (event._tag !== "Event") return
      const id = hintId({ event: event.event, data: JSON.parse(event.data) as unknown })
      if (id !== undefined) ids.push(id)
      if (id === last) done = true
    })
    const body = response.body
    if (body === null) throw new Error("no body")
    const reader = body.getReader()
    const decoder = new TextDecoder()
    while (!done) {
      const chunk = await reader.read()
      if (chunk.done) break
      parser.feed(decoder.decode(chunk.value, { stream: true }))
    }
    return ids
  }).pipe(
    Effect.timeoutOrElse({ duration: "15 seconds", orElse: () => Effect.fail(new Error(`hint ${last} never came`)) }),
    Effect.orDie
  )

layer(testApp({}, TestPlugins), { excludeTestServices: true })("GET /api/broadcast over real HTTP and Redis", (it) => {
  it.effect(
    "rule 1: a save is hinted as `event: changed` with exactly {businessObject, businessObjectId}, to its own workspace only",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const mine = yield* freshWorkspace
        const other = yield* freshWorkspace
        const { client, cookie } = yield* signedInMember(base, mine)
        const { client: otherClient, cookie: otherCookie } = yield* signedInMember(base, other)
        const stream = yield* openStream(cookie)
        const otherStream = yield* openStream(otherCookie)
        expect(stream.status).toBe(200)
        expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/)
        expect(stream.headers.get("cache-control")).toBe("no-cache")

        const record = yield* createRecord(client, deal, { title: "Hinted" })
        const events = yield* awaitHint(stream, record.id)
        expect(events).toEqual([opened, changed(deal, record.id)])
        // The data is exactly the two fields, in the wire order of decisions.md.
        expect(yield* stream.raw).toContain(
          `event: changed\ndata: ${JSON.stringify({ businessObject: deal, businessObjectId: record.id })}\n\n`
        )

        // Mine was delivered before the other workspace's save began: had it leaked,
        // the other stream would hold it before its own hint.
        const theirs = yield* createRecord(otherClient, company, { name: "Elsewhere" })
        expect(yield* awaitHint(otherStream, theirs.id)).toEqual([opened, changed(company, theirs.id)])
        expect(yield* stream.events).toEqual([opened, changed(deal, record.id)])
      })
  )

  it.effect("the one keep-alive timer reaches every open idle stream (BROADCAST_KEEPALIVE_MS)", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { cookie } = yield* signedInMember(base, workspace)
      const streams = yield* Effect.forEach([1, 2, 3], () => openStream(cookie))
      for (const stream of streams) {
        expect(stream.status).toBe(200)
        expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/)
      }
      yield* Effect.forEach(streams, (stream) =>
        eventually(
          "two keep-alive lines",
          Effect.map(stream.raw, (raw) => raw.split(": keep-alive\n\n").length >= 3),
          "5 seconds"
        )
      )
      for (const stream of streams) expect(yield* stream.events).toEqual([opened])
    }).pipe(
      Effect.scoped,
      // Its own server, with a short keep-alive interval; released after the scope above.
      Effect.provide(testApp({ broadcastKeepAlive: Duration.millis(200) }))
    )
  )

  it.effect("HEAD answers the stream's headers and opens no stream", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const bus = yield* BroadcastBus
      const workspace = yield* freshWorkspace
      const { cookie } = yield* signedInMember(base, workspace)
      const before = yield* bus.subscriberCount
      const response = yield* Effect.promise(() =>
        fetch(`${base}/api/broadcast`, { method: "HEAD", headers: { cookie } })
      )
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/)
      expect(yield* Effect.promise(() => response.text())).toBe("")
      expect(yield* bus.subscriberCount).toBe(before)
    })
  )

  it.effect("shutting the server down ends its open streams (so it can stop, and the tabs reconnect)", () =>
    Effect.gen(function* () {
      const workspace = yield* freshWorkspace
      const scope = yield* Scope.make()
      const app = yield* Layer.build(testApp()).pipe(Scope.provide(scope))
      const base = yield* Effect.provide(baseUrl, app)
      const { cookie } = yield* signedInMember(base, workspace)
      const response = yield* Effect.promise(() => fetch(`${base}/api/broadcast`, { headers: { cookie } }))
      const body = response.body
      if (body === null) throw new Error("no body")
      const reader = body.getReader()
      const first = yield* Effect.promise(() => reader.read())
      expect(new TextDecoder().decode(first.value)).toContain(": connected")
      expect(yield* Context.get(app, BroadcastBus).subscriberCount).toBe(1)

      yield* Scope.close(scope, Exit.void).pipe(
        Effect.timeoutOrElse({
          duration: "10 seconds",
          orElse: () => Effect.fail(new Error("the server did not stop"))
        }),
        Effect.orDie
      )
      const ended = yield* Effect.promise(async () => {
        try {
          for (;;) if ((await reader.read()).done) return true
        } catch {
          return true
        }
      }).pipe(Effect.timeout("5 seconds"))
      expect(ended).toBe(true)
    })
  )

  it.effect(
    "permissions are read at open: a deal reader gets deal hints only; a grant applies from the next stream",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const roles = yield* Roles
        yield* roles.grant(workspace, "deal-reader", deal, "read")
        const { client: admin, cookie: adminCookie } = yield* signedInMember(base, workspace)
        const { cookie: readerCookie } = yield* signedInMember(base, workspace, "deal-reader")
        const everything = yield* openStream(adminCookie)
        const dealsOnly = yield* openStream(readerCookie)

        // Each save waits until the admin's stream has its hint: the hub had handed it
        // to every stream of the workspace by then, so the order below is the order of delivery.
        const save = (businessObject: string, values: Record<string, unknown>) =>
          Effect.gen(function* () {
            const record = yield* createRecord(admin, businessObject, values)
            yield* awaitHint(everything, record.id)
            return record.id
          })
        const d1 = yield* save(deal, { title: "D1" })
        const c1 = yield* save(company, { name: "C1" })
        const d2 = yield* save(deal, { title: "D2" })
        yield* awaitHint(dealsOnly, d2)
        expect(yield* everything.events).toEqual([opened, changed(deal, d1), changed(company, c1), changed(deal, d2)])
        expect(yield* dealsOnly.events).toEqual([opened, changed(deal, d1), changed(deal, d2)])

        // The reader's role now reads companies too; its open stream does not learn that.
        yield* roles.grant(workspace, "deal-reader", company, "read")
        const c2 = yield* save(company, { name: "C2" })
        const d3 = yield* save(deal, { title: "D3" })
        yield* awaitHint(dealsOnly, d3)
        expect(yield* dealsOnly.events).toEqual([opened, changed(deal, d1), changed(deal, d2), changed(deal, d3)])

        // A stream opened after the grant gets company hints.
        const reopened = yield* openStream(readerCookie)
        const c3 = yield* save(company, { name: "C3" })
        const d4 = yield* save(deal, { title: "D4" })
        expect(yield* awaitHint(reopened, d4)).toEqual([opened, changed(company, c3), changed(deal, d4)])
        yield* awaitHint(dealsOnly, d4)
        expect(yield* dealsOnly.events).toEqual([
          opened,
          changed(deal, d1),
          changed(deal, d2),
          changed(deal, d3),
          changed(deal, d4)
        ])
        expect(yield* everything.events).toEqual([
          opened,
          changed(deal, d1),
          changed(company, c1),
          changed(deal, d2),
          changed(company, c2),
          changed(deal, d3),
          changed(company, c3),
          changed(deal, d4)
        ])
      })
  )

  it.effect("authentication: an API key gets 403 (a browser session is required); no credentials 401", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const workspace = yield* freshWorkspace
      const { key } = yield* (yield* ApiKeys).create(workspace, "integration", "admin")
      const url = `${base}/api/broadcast`

      const withKey = yield* probe(url, { authorization: `Bearer ${key}` })
      expect(withKey.status).toBe(403)
      expect(withKey.body).toEqual({
        _tag: "Forbidden",
        message: expect.stringMatching(/browser session/),
        requestId: expect.any(String)
      })

      const anonymous = yield* probe(url)
      expect(anonymous.status).toBe(401)
      expect(anonymous.body).toMatchObject({ _tag: "Unauthorized", message: expect.any(String) })

      const forged = yield* probe(url, { cookie: "session=not-a-session" })
      expect(forged.status).toBe(401)
      expect(forged.body).toMatchObject({ _tag: "Unauthorized" })
    })
  )

  it.effect(
    "rules 2 and 3: a rolled-back unit broadcasts nothing; a closed stream misses hints and nothing is replayed",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* signedInMember(base, workspace)
        // The watcher opens first and sees the record's own hint: a hint still on its way when a stream
        // opens may or may not reach it, which would make what follows depend on timing.
        const watcher = yield* openStream(cookie)
        const existing = yield* createRecord(client, deal, { title: "Existing" })
        yield* awaitHint(watcher, existing.id)

        // A listener fails after writing a crm/activity: the whole unit rolls back.
        const refused = yield* refusal(recordsOf(client, "test/widget").create({ name: "bad", fail: true }))
        expect(refused.status).toBe(409)
        // Invalid values: refused, nothing written.
        const invalid = yield* refusal(recordsOf(client, deal).update(existing.id, { amount: "12,50" }))
        expect(invalid.status).toBe(400)
        const fine = yield* createRecord(client, "test/widget", { name: "fine" })
        expect(yield* awaitHint(watcher, fine.id)).toEqual([
          opened,
          changed(deal, existing.id),
          changed("test/widget", fine.id)
        ])
        const activities = (yield* recordsOf(client, "crm/activity").list()).body
        expect(activities.records).toEqual([])

        // A tab closes; a save happens meanwhile (the watcher proves it was broadcast).
        const tab = yield* openStream(cookie)
        const before = yield* createRecord(client, deal, { title: "Seen" })
        yield* awaitHint(tab, before.id)
        yield* tab.close
        const missed = yield* createRecord(client, deal, { title: "Missed" })
        yield* awaitHint(watcher, missed.id)
        expect(yield* tab.events).toEqual([opened, changed(deal, before.id)])

        // The tab reopens: what it missed is not replayed; it sees the next save only.
        const reopened = yield* openStream(cookie)
        const after = yield* createRecord(client, deal, { title: "After" })
        expect(yield* awaitHint(reopened, after.id)).toEqual([opened, changed(deal, after.id)])
        expect(yield* watcher.events).toEqual([
          opened,
          changed(deal, existing.id),
          changed("test/widget", fine.id),
          changed(deal, before.id),
          changed(deal, missed.id),
          changed(deal, after.id)
        ])
      })
  )

  it.effect(
    "a dropped connection releases its subscription: 50 streams opened and closed leave the count as it was",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const bus = yield* BroadcastBus
        const workspace = yield* freshWorkspace
        const { cookie } = yield* signedInMember(base, workspace)
        // Five sessions of ten streams: under MAX_STREAMS_PER_SESSION (16), so none is evicted.
        const cookies = [
          cookie,
          ...(yield* Effect.forEach([2, 3, 4, 5], () => Effect.map(signedInMember(base, workspace), (m) => m.cookie)))
        ]
        // Streams of earlier tests are released about 100 ms after their client went away.
        yield* eventually(
          "no stream left open by earlier tests",
          Effect.map(bus.subscriberCount, (n) => n === 0)
        )
        const before = yield* bus.subscriberCount

        const streams = yield* Effect.forEach(
          Array.from({ length: 50 }),
          (_, i) => openStream(cookies[i % cookies.length] ?? cookie),
          {
            concurrency: 10
          }
        )
        for (const stream of streams) expect(stream.status).toBe(200)
        expect(yield* bus.subscriberCount).toBe(before + 50)

        yield* Effect.forEach(streams, (stream) => stream.close, { discard: true })
        yield* eventually(
          "every subscription released",
          Effect.map(bus.subscriberCount, (n) => n === before)
        )
        // And the workspace still works for a new stream.
        const fresh = yield* openStream(cookie)
        expect(yield* bus.subscriberCount).toBe(before + 1)
        yield* fresh.close
        yield* eventually(
          "the last one released too",
          Effect.map(bus.subscriberCount, (n) => n === before)
        )
      })
  )

  it.effect("a client that never reads delays no other stream: its own buffer drops the oldest hints", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const bus = yield* BroadcastBus
      const workspace = yield* freshWorkspace
      const { cookie } = yield* signedInMember(base, workspace)
      const stalled = yield* openUnread(`${base}/api/broadcast`, cookie)
      expect(stalled.status).toBe(200)
      const reader = yield* openStream(cookie)

      // Big hints, so that far more bytes go out than the socket buffers of the
      // stalled connection and its per-stream buffer can hold together.
      const padding = "x".repeat(10_000)
      const total = 2_000
      yield* Effect.forEach(
        Array.from({ length: total }, (_, i) => `${i}-${padding}`),
        (businessObjectId) =>
          bus.publish(
            new BroadcastEnvelope({
              workspace: workspace.id,
              type: "changed",
              data: { businessObject: deal, businessObjectId }
            })
          ),
        { concurrency: 16, discard: true }
      )
      const last = `last-${crypto.randomUUID()}`
      yield* bus.publish(
        new BroadcastEnvelope({
          workspace: workspace.id,
          type: "changed",
          data: { businessObject: deal, businessObjectId: last }
        })
      )
      const started = performance.now()
      yield* awaitHint(reader, last, "5 seconds")
      const millis = performance.now() - started
      expect(millis).toBeLessThan(5_000)

      // The stalled stream was really held back: read now, it has lost hints (its
      // buffer of BroadcastHub.defaultCapacity slid past them) but kept the newest.
      const ids = yield* readUntil(stalled, last)
      expect(ids.at(-1)).toBe(last)
      expect(ids.length).toBeLessThan(total + 1)
      expect(ids.length).toBeGreaterThanOrEqual(BroadcastHub.defaultCapacity)
    })
  )
})
