import { AppConfig, redisPrefixOf } from "../../src/config/AppConfig"
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ApiError, createClient, Decimal, PlainDate } from "../../src/client"
import type { BroadcastData, BroadcastStream, HydratedCollectionChanges, HydratedValueChange } from "../../src/client"
import * as PresenceStoreRedis from "../../src/presence/PresenceStoreRedis"
import { RedisConnection } from "../../src/redis/RedisConnection"
import { baseUrl, freshUser, freshWorkspace, TestApp, testPassword, testRedisUrl } from "../support/TestApp"
import { browserFetch } from "../support/browserFetch"
import { fetchEventSource } from "../support/FetchEventSource"
import { QueryClient, QueryObserver } from "@tanstack/react-query"
import { recordQuery } from "../../src/client/react/queries"
import { attachBroadcast } from "../../src/client/react/sharedBroadcast"
import { eventually } from "../broadcast/streamHelpers"

/**
 * The typed client against the real service (real PostgreSQL and Redis): a
 * "tab" is a client over a fetch that keeps its session cookie, and an
 * EventSource built on that fetch. What the client sends and decodes must
 * match what the server really does.
 */

const deal = "crm/deal"

/** Awaits a client promise inside the test's Effect; a rejection is a test failure. */
const call = <A>(promise: () => Promise<A>) => Effect.promise(promise)
/** The rejection of a client promise (the test fails if it resolves). */
const failure = (promise: () => Promise<unknown>) =>
  Effect.promise(() =>
    promise().then(
      (value) => Promise.reject(new Error(`expected a failure, got ${JSON.stringify(value)}`)),
      (e: unknown) => e
    )
  )

/** A signed-in tab of a new member of a new workspace. */
const tab = Effect.gen(function* () {
  const base = yield* baseUrl
  const workspace = yield* freshWorkspace
  const user = yield* freshUser({ workspace, role: "admin" })
  const fetch = browserFetch()
  const events = fetchEventSource(fetch)
  const client = createClient({ baseUrl: base, fetch, EventSource: events.EventSource })
  const me = yield* call(() =>
    client.auth.login({ workspace: workspace.slug, email: user.email, password: testPassword })
  )
  const { command } = yield* RedisConnection
  const prefix = redisPrefixOf(yield* AppConfig)
  const keys = [deal, "crm/company"].flatMap((bo) =>
    Object.values(PresenceStoreRedis.presenceKeys(prefix, workspace.id, bo))
  )
  yield* Effect.addFinalizer(() => Effect.promise(() => command.del(...keys)))
  return { base, workspace, user, me, client, events }
})

/** The next hint of `type` the stream delivers that matches `predicate` (bounded wait). */
const nextHint = (stream: BroadcastStream, type: "changed" | "presence", predicate: (data: BroadcastData) => boolean) =>
  new Promise<BroadcastData>((resolve, reject) => {
    const timer = setTimeout(() => {
      off()
      reject(new Error(`no ${type} hint within 10 s`))
    }, 10_000)
    const off = stream.on(type, (data) => {
      if (!predicate(data)) return
      clearTimeout(timer)
      off()
      resolve(data)
    })
  })

layer(Layer.merge(TestApp, RedisConnection.layer(testRedisUrl)), { excludeTestServices: true })(
  "the typed client against the real service",
  (it) => {
    it.effect(
      "auth: login decodes Me and sets the session cookie; me; logout ends it (401 ApiError); a wrong password is a 401 ApiError",
      () =>
        Effect.gen(function* () {
          const { client, me, user, workspace, base } = yield* tab
          expect(me).toMatchObject({
            kind: "user",
            id: user.id,
            name: user.name,
            email: user.email,
            workspace: { slug: workspace.slug }
          })
          expect(yield* call(() => client.auth.me())).toMatchObject({ id: user.id })
          yield* call(() => client.auth.logout())
          const signedOut = yield* failure(() => client.auth.me())
          expect(signedOut).toBeInstanceOf(ApiError)
          expect(signedOut).toMatchObject({ status: 401, _tag: "Unauthorized" })

          const stranger = createClient({ baseUrl: base, fetch: browserFetch() })
          const refused = yield* failure(() =>
            stranger.auth.login({ workspace: workspace.slug, email: user.email, password: "wrong" })
          )
          expect(refused).toMatchObject({ status: 401, _tag: "Unauthorized" })
        })
    )

    it.effect("records: create, get, list, update, lifecycle, remove; errors are typed ApiErrors", () =>
      Effect.gen(function* () {
        const { client } = yield* tab
        const definitions = yield* call(() => client.businessObjects())
        expect(definitions.map((d) => d.name)).toEqual(
          expect.arrayContaining(["crm/deal", "crm/company", "crm/activity"])
        )
        expect(definitions.find((d) => d.name === deal)?.fields.amount).toEqual({ kind: "decimal" })

        const created = yield* call(() =>
          client.records.create(deal, { title: "Kiosk", stage: "lead", amount: Decimal.parse("1200.00") })
        )
        expect(created).toMatchObject({
          businessObject: deal,
          state: "operational",
          values: { title: "Kiosk", stage: "lead", amount: "1200.00" }
        })
        expect((yield* call(() => client.records.get(deal, created.id))).values).toEqual(created.values)
        expect((yield* call(() => client.records.list(deal))).map((r) => r.id)).toContain(created.id)
        const updated = yield* call(() => client.records.update(deal, created.id, { amount: "1350.00", stage: null }))
        expect(updated.values).toEqual({ title: "Kiosk", amount: "1350.00" })
        // The title is required: clearing it is refused.
        expect(yield* failure(() => client.records.update(deal, created.id, { title: null }))).toMatchObject({
          status: 422,
          _tag: "UnprocessableEntity"
        })

        const draft = yield* call(() => client.records.create(deal, { title: "Draft" }, { draft: true }))
        expect(draft.state).toBe("draft")
        expect((yield* call(() => client.records.publish(deal, draft.id))).state).toBe("operational")
        expect((yield* call(() => client.records.archive(deal, draft.id))).state).toBe("archived")
        expect(yield* failure(() => client.records.update(deal, draft.id, { title: "x" }))).toMatchObject({
          status: 409,
          _tag: "Conflict"
        })
        expect((yield* call(() => client.records.restore(deal, draft.id))).state).toBe("operational")
        yield* call(() => client.records.remove(deal, draft.id))
        expect(yield* failure(() => client.records.get(deal, draft.id))).toMatchObject({
          status: 404,
          _tag: "NotFound"
        })

        const bad = yield* failure(() => client.records.create(deal, { amount: "12,50" }))
        expect(bad).toBeInstanceOf(ApiError)
        expect(bad).toMatchObject({ status: 400, _tag: "BadRequest" })
        expect((bad as ApiError).message).toContain("amount")
        expect(yield* failure(() => client.records.list("crm/nothing"))).toMatchObject({ status: 404 })
      })
    )

    it.effect(
      "path parameters are encoded: ids and names holding /, ?, #, %, spaces or unicode reach their route whole",
      () =>
        Effect.gen(function* () {
          const { client } = yield* tab
          const record = yield* call(() => client.records.create(deal, { title: "Kiosk" }))
          // The server's NotFound names what it was asked for: each parameter arrived whole, decoded once.
          const odd = "a/b?c#d e%f%25 ü✓"
          const notFound = (message: string) => ({ status: 404, _tag: "NotFound", message })
          expect(yield* failure(() => client.records.get(deal, odd))).toMatchObject(
            notFound(`no ${deal} record ${odd}`)
          )
          expect(yield* failure(() => client.records.update(deal, odd, { title: "x" }))).toMatchObject(
            notFound(`no ${deal} record ${odd}`)
          )
          expect(yield* failure(() => client.records.archive(deal, odd))).toMatchObject(
            notFound(`no ${deal} record ${odd}`)
          )
          expect(yield* failure(() => client.records.action(deal, odd, record.id))).toMatchObject(
            notFound(`unknown action ${odd} on ${deal}`)
          )
          expect(yield* failure(() => client.records.list(`crm/${odd}`))).toMatchObject(
            notFound(`unknown business object: crm/${odd}`)
          )
          expect(yield* failure(() => client.presence.list(`crm/${odd}`))).toMatchObject(
            notFound(`unknown business object: crm/${odd}`)
          )
          expect(yield* failure(() => client.audit.timeline(`crm/${odd}`, record.id))).toMatchObject(
            notFound(`unknown business object: crm/${odd}`)
          )
          // The timeline route itself, found with the odd id in one segment: an empty page, not a 404.
          expect(yield* call(() => client.audit.timeline(deal, odd))).toEqual({ entries: [], nextCursor: null })
          expect((yield* call(() => client.audit.timeline(deal, record.id))).entries).toHaveLength(1)
        })
    )

    it.effect(
      "a write whose answer was lost is sent again with its Idempotency-Key: the server replays it, nothing runs twice",
      () =>
        Effect.gen(function* () {
          const { base, workspace, user } = yield* tab
          // A tab whose network loses the answer to the first write of each kind after the server handled it.
          const fetch = browserFetch()
          const lost = new Set<string>()
          const replays: Array<string | null> = []
          const lossy: typeof globalThis.fetch = async (input, init) => {
            const response = await fetch(input, init)
            const method = init?.method ?? "GET"
            if (method === "GET" || method === "PUT" || String(input).endsWith("/api/auth/login")) return response
            replays.push(response.headers.get("idempotency-replayed"))
            if (lost.has(method)) return response
            lost.add(method)
            await response.text()
            throw new TypeError("fetch failed")
          }
          const client = createClient({ baseUrl: base, fetch: lossy })
          yield* call(() => client.auth.login({ workspace: workspace.slug, email: user.email, password: testPassword }))

          const created = yield* call(() => client.records.create(deal, { title: "Once", amount: "10.00" }))
          const updated = yield* call(() => client.records.update(deal, created.id, { amount: "12.00" }))
          yield* call(() => client.records.remove(deal, created.id))
          expect(updated.values).toEqual({ title: "Once", amount: "12.00" })
          expect(replays).toEqual([null, "true", null, "true", null, "true"])
          expect(yield* call(() => client.records.list(deal))).toEqual([])
          const { entries } = yield* call(() => client.audit.timeline(deal, created.id))
          expect(entries.map((row) => row.operation)).toEqual(["deleted", "updated", "created"])
        })
    )

    it.effect(
      "audit.timeline: pages newest first to the first entry, hydrated against the current schema (Decimal, PlainDate)",
      () =>
        Effect.gen(function* () {
          const { client } = yield* tab
          const record = yield* call(() =>
            client.records.create(deal, {
              title: "Kiosk",
              amount: "1200.00",
              closeDate: "2026-03-01",
              address: { street: "1 Main St", city: "Lyon" },
              lineItems: [{ id: "l1", product: "Screen", quantity: 2, price: "99.90" }]
            })
          )
          yield* call(() =>
            client.records.update(deal, record.id, {
              amount: "1350.00",
              closeDate: PlainDate.parse("2026-04-30"),
              address: { street: "2 High St", city: "Lyon" },
              lineItems: [
                { id: "l1", product: "Screen", quantity: 2, price: "89.90" },
                { id: "l2", product: "Stand", price: "20.00" }
              ]
            })
          )
          yield* call(() => client.records.archive(deal, record.id))

          const page = yield* call(() => client.audit.timeline(deal, record.id, { limit: 20 }))
          expect(page.nextCursor).toBeNull()
          expect(page.entries.map((row) => row.operation)).toEqual(["archived", "updated", "created"])
          const [archived, updated, created] = page.entries
          expect(archived && ("record" in archived || "changes" in archived)).toBe(false)

          expect(created?.record).toEqual({
            title: "Kiosk",
            amount: Decimal.parse("1200.00"),
            closeDate: PlainDate.parse("2026-03-01"),
            address: { street: "1 Main St", city: "Lyon" },
            lineItems: [{ id: "l1", product: "Screen", quantity: 2, price: Decimal.parse("99.90") }]
          })
          const changes = updated?.changes ?? {}
          expect(changes.amount).toEqual({ from: Decimal.parse("1200.00"), to: Decimal.parse("1350.00") })
          expect((changes.amount as HydratedValueChange).to).toBeInstanceOf(Decimal)
          expect(changes.closeDate).toEqual({
            from: PlainDate.parse("2026-03-01"),
            to: PlainDate.parse("2026-04-30")
          })
          expect(changes.address).toEqual({
            from: { street: "1 Main St", city: "Lyon" },
            to: { street: "2 High St", city: "Lyon" }
          })
          const lineItems = changes.lineItems as HydratedCollectionChanges
          expect(lineItems.added).toEqual([{ id: "l2", values: { product: "Stand", price: Decimal.parse("20.00") } }])
          expect(lineItems.modified).toEqual([
            { id: "l1", changes: { price: { from: Decimal.parse("99.90"), to: Decimal.parse("89.90") } } }
          ])
          expect(updated?.actor).toMatchObject({ kind: "user" })
          expect(typeof updated?.at).toBe("string")

          // Page by page, one row each, following nextCursor until it is null at the first entry.
          const operations: Array<string> = []
          let cursor: string | undefined
          for (let pages = 0; pages < 4; pages++) {
            const next = yield* call(() => client.audit.timeline(deal, record.id, { limit: 1, cursor }))
            operations.push(...next.entries.map((row) => row.operation))
            if (next.nextCursor === null) break
            cursor = next.nextCursor
          }
          expect(operations).toEqual(["archived", "updated", "created"])
          expect(yield* call(() => client.audit.timeline(deal, "no-such-record"))).toEqual({
            entries: [],
            nextCursor: null
          })
        })
    )

    it.effect("presence: heartbeat (204), list by record id with {id, name}, leave (keepalive DELETE, 204)", () =>
      Effect.gen(function* () {
        const { client, user } = yield* tab
        const record = yield* call(() => client.records.create(deal, { title: "Kiosk" }))
        expect(yield* call(() => client.presence.list(deal))).toEqual({})
        yield* call(() => client.presence.heartbeat(deal, record.id, "form-1"))
        yield* call(() => client.presence.heartbeat(deal, record.id, "form-1"))
        expect(yield* call(() => client.presence.list(deal))).toEqual({
          [record.id]: [{ id: "form-1", name: user.name, userId: user.id }]
        })
        yield* call(() => client.presence.leave(deal, record.id, "form-1"))
        expect(yield* call(() => client.presence.list(deal))).toEqual({})
        expect(yield* failure(() => client.presence.heartbeat(deal, "no-such-record", "form-1"))).toMatchObject({
          status: 404
        })
      })
    )

    it.effect(
      "broadcast: open() streams decoded changed and presence hints; on() returns its remover; close() ends the stream",
      () =>
        Effect.gen(function* () {
          const { client, events } = yield* tab
          const stream = client.broadcast.open()
          yield* Effect.addFinalizer(() => Effect.sync(() => stream.close()))
          const source = events.instances[0]
          expect(source?.url).toMatch(/\/api\/broadcast$/)
          expect(yield* call(() => source?.opened ?? Promise.resolve(false))).toBe(true)

          const seen: Array<string> = []
          const off = stream.on("changed", (data) => seen.push(data.businessObjectId))
          const record = yield* call(() => client.records.create(deal, { title: "Kiosk" }))
          const changed = nextHint(stream, "changed", (data) => data.businessObjectId === record.id)
          yield* call(() => client.records.update(deal, record.id, { title: "Kiosk 2" }))
          expect(yield* call(() => changed)).toEqual({ businessObject: deal, businessObjectId: record.id })

          const presence = nextHint(stream, "presence", (data) => data.businessObjectId === record.id)
          yield* call(() => client.presence.heartbeat(deal, record.id, "form-1"))
          expect(yield* call(() => presence)).toEqual({ businessObject: deal, businessObjectId: record.id })
          yield* call(() => client.presence.leave(deal, record.id, "form-1"))

          expect(seen).toContain(record.id)
          off()
          const count = seen.length
          const again = nextHint(stream, "changed", (data) => data.businessObjectId === record.id)
          yield* call(() => client.records.update(deal, record.id, { title: "Kiosk 3" }))
          yield* call(() => again)
          expect(seen).toHaveLength(count)

          stream.close()
          expect(source?.readyState).toBe(2)
        })
    )
    it.effect(
      "a hint missed while disconnected is not replayed; the binding re-reads on the next open's resync and shows the new value",
      () =>
        Effect.gen(function* () {
          const { client, workspace, events } = yield* tab
          const record = yield* call(() => client.records.create(deal, { title: "Before" }))
          const queryClient = new QueryClient()
          yield* Effect.addFinalizer(() => Effect.sync(() => queryClient.clear()))
          const observer = new QueryObserver(queryClient, recordQuery(client, deal, record.id))
          const unsubscribe = observer.subscribe(() => undefined)
          yield* Effect.addFinalizer(() => Effect.sync(unsubscribe))
          const shown = Effect.sync(() => observer.getCurrentResult().data?.values.title)
          yield* eventually(
            "the record is shown",
            Effect.map(shown, (title) => title === "Before")
          )

          // Connected, then disconnected: the binding's stream is closed.
          const before = events.instances.length
          const detach = attachBroadcast(client, workspace.slug, queryClient)
          // Where the runtime has Web Locks and BroadcastChannel (Node 24 does), the stream is opened once this tab leads.
          yield* eventually(
            "the binding opens its stream",
            Effect.sync(() => events.instances.length > before)
          )
          const first = events.instances.at(-1)
          expect(yield* call(() => first?.opened ?? Promise.resolve(false))).toBe(true)
          detach()
          yield* eventually(
            "the stream is closed",
            Effect.sync(() => first?.readyState === 2)
          )

          // The write while disconnected; a witness stream sees its hint, so the hint is no longer in flight.
          const witness = client.broadcast.open()
          yield* Effect.addFinalizer(() => Effect.sync(() => witness.close()))
          yield* call(() => events.instances.at(-1)?.opened ?? Promise.resolve(false))
          const missedHint = nextHint(witness, "changed", (data) => data.businessObjectId === record.id)
          yield* call(() => client.records.update(deal, record.id, { title: "Missed" }))
          yield* call(() => missedHint)
          witness.close()
          expect(yield* shown).toBe("Before")

          // A stream opened now starts with resync and never gets the missed hint: a later one arrives without it.
          const later = client.broadcast.open()
          yield* Effect.addFinalizer(() => Effect.sync(() => later.close()))
          const received: Array<string> = []
          later.on("resync", () => received.push("resync"))
          later.on("changed", (data) => received.push(data.businessObjectId))
          yield* call(() => events.instances.at(-1)?.opened ?? Promise.resolve(false))
          const sentinel = yield* call(() => client.records.create(deal, { title: "Sentinel" }))
          yield* eventually(
            "the sentinel's hint arrives",
            Effect.sync(() => received.includes(sentinel.id))
          )
          expect(received).toEqual(["resync", sentinel.id])
          later.close()

          // Connected again: the open's resync re-reads everything the cache holds.
          const reattached = attachBroadcast(client, workspace.slug, queryClient)
          yield* Effect.addFinalizer(() => Effect.sync(reattached))
          yield* eventually(
            "the record shows the value written while disconnected",
            Effect.map(shown, (title) => title === "Missed")
          )
        })
    )
  }
)
