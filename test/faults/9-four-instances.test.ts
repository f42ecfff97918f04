import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { UpdateRecord } from "../../src/api/RecordsApi"
import { changed, hintId } from "../broadcast/streamHelpers"
import { recordsOf, timelineOf } from "../support/api"
import type { Client } from "../support/api"
import { recordPath, refusal, settled } from "../support/apiCaller"
import type { SseEvent } from "../support/sse"
import { deploymentNames, provisionDeployment } from "./support/deployment"
import { startInstances } from "./support/instances"
import { nginxBinary, startNginx } from "./support/nginx"
import { endedWith, has, presenceEvent, until } from "./support/streamChecks"
import { viaProxy } from "./support/viaProxy"

/**
 * Four compiled instances of one deployment (one database, one Redis prefix,
 * one set of queues) behind nginx running deploy/nginx.conf: round robin, no
 * sticky sessions. Every request goes through nginx, and each step names the
 * instance that served it (its `request` log line, by request id): signed in
 * on one, written on another, read and streamed on a third; presence and
 * revocation across all of them.
 */

const deal = "crm/deal"
const company = "crm/company"
const activity = "crm/activity"
const instanceCount = 4

const instancesOf = (sent: ReadonlyArray<{ readonly instance: number }>) => new Set(sent.map((s) => s.instance))
const editorPath = (id: string, editor: string) => ({ ...recordPath(deal, id), editor })
const editorsOn = (client: Client, id: string) =>
  Effect.map(
    client.call((api) => api.presence.list({ params: { namespace: "crm", name: "deal" } })),
    (answer) => (answer.body.records[id] ?? []).map((editor) => editor.name).sort()
  )

describe("fault 9: four instances behind nginx", () => {
  it.live(
    "every documented flow through nginx round robin: sessions, writes, reads, timelines, the feed, streams, presence, revocation, retries and conflicts, served by every instance",
    () =>
      Effect.gen(function* () {
        if (nginxBinary === undefined) {
          return yield* Effect.die(new Error("nginx is not installed: apt-get install nginx-light (.ci/run does)"))
        }
        const began = Date.now()
        const names = deploymentNames()
        const { alice, bob, aliceSignIn, bobSignIn } = yield* provisionDeployment(names)
        const instances = yield* startInstances(instanceCount, {
          REDIS_PREFIX: names.redisPrefix,
          QUEUE_PREFIX: names.queuePrefix,
          TRUST_PROXY: "true"
        })
        const instancesUp = Date.now()
        const nginx = yield* startNginx(
          nginxBinary,
          instances.map((i) => i.port)
        )
        const proxy = viaProxy(nginx.base, instances, names.run)

        // Sessions made on one instance are good on every other.
        const aliceSession = yield* proxy.signIn("sign-in-alice", aliceSignIn)
        const bobSession = yield* proxy.signIn("sign-in-bob", bobSignIn)
        const asAlice = aliceSession.value
        const asBob = bobSession.value
        const me = yield* proxy.readElsewhere("me", asAlice, [aliceSession.instance], (c) =>
          c.call((api) => api.auth.me())
        )
        expect(me.value.body.id).toBe(alice.id)

        // Streams held on every instance: Alice's broadcast, Bob's broadcast, and Alice's feed.
        const aliceStreams = yield* proxy.streamOnEvery("broadcast-alice", "/api/broadcast", { cookie: asAlice })
        const bobStreams = yield* proxy.streamOnEvery("broadcast-bob", "/api/broadcast", { cookie: asBob })
        const feedStreams = yield* proxy.streamOnEvery("feed-sse-alice", `/api/audit/feed?businessObject=${deal}`, {
          cookie: asAlice,
          accept: "text/event-stream"
        })

        // The README's curl tour, one request after another through nginx.
        const records = <A, E>(
          step: string,
          bo: string,
          call: (r: ReturnType<typeof recordsOf>) => Effect.Effect<A, E>
        ) => proxy.send(step, asAlice, (c) => call(recordsOf(c, bo)))
        const acme = yield* records("create-company", company, (r) => r.create({ name: "Acme", wonDeals: 0 }))
        const kiosk = yield* records("create-deal", deal, (r) =>
          r.create({ title: "Kiosk", stage: "open", amount: "1200.00", company: acme.value.body.id })
        )
        const dealId = kiosk.value.body.id
        const writes = [
          acme,
          kiosk,
          yield* records("update-deal", deal, (r) => r.update(dealId, { amount: "1350.00" })),
          yield* records("close-deal", deal, (r) => r.action("close", dealId)),
          yield* records("follow-up", deal, (r) => r.action("follow-up", dealId)),
          yield* records("archive-deal", deal, (r) => r.archive(dealId))
        ]
        // Signed in on one instance, written on another.
        expect(writes.some((w) => w.instance !== aliceSession.instance)).toBe(true)
        const writtenAt = kiosk.instance

        // Streamed on a third: every stream of both users, on every instance, got the deal's hint.
        yield* has([...aliceStreams, ...bobStreams], changed(deal, dealId))
        expect([...aliceStreams].some((s) => s.instance !== aliceSession.instance && s.instance !== writtenAt)).toBe(
          true
        )
        // A write served by each instance is heard on every stream of every instance (the fan-out over Redis).
        const heardFrom = new Map<number, string>()
        for (let tries = 0; heardFrom.size < instanceCount; tries++) {
          if (tries === instanceCount * 3) return yield* Effect.die(new Error("writes did not reach every instance"))
          const made = yield* records("create-on-each", company, (r) => r.create({ name: `Made ${tries}` }))
          if (!heardFrom.has(made.instance)) heardFrom.set(made.instance, made.value.body.id)
        }
        yield* Effect.forEach(heardFrom.values(), (id) => has([...aliceStreams, ...bobStreams], changed(company, id)), {
          discard: true
        })
        const archivedInFeed = (events: ReadonlyArray<SseEvent>) =>
          events.some(
            (e) => e.event === "entry" && hintId(e) === dealId && JSON.stringify(e.data).includes('"archived"')
          )
        yield* Effect.forEach(feedStreams, (s) => s.value.waitFor(archivedInFeed), { discard: true })

        // Read on a third: the timeline and the feed hold every write, wherever it was made.
        const timeline = yield* proxy.readElsewhere("timeline", asAlice, [aliceSession.instance, writtenAt], (c) =>
          timelineOf(c, deal, dealId)
        )
        expect(timeline.value.entries.map((e) => e.operation)).toEqual(["archived", "updated", "updated", "created"])
        const feed = yield* proxy.readElsewhere("feed", asAlice, [aliceSession.instance, writtenAt], (c) =>
          c.call((api) => api.audit.feed({ query: { record: dealId, limit: 100 } }))
        )
        expect(feed.value.body.entries.map((e) => e.id)).toEqual(timeline.value.entries.map((e) => e.id).reverse())
        // The cascade, the job and the workflow ran on whichever instance's worker took them.
        const subjects = proxy
          .send("activities", asAlice, (c) => recordsOf(c, activity).list())
          .pipe(
            Effect.map((list) =>
              list.value.body.records
                .filter((r) => r.values.company === acme.value.body.id)
                .map((r) => String(r.values.subject))
                .sort()
            )
          )
        expect(yield* until("three activities", subjects, (s) => s.length >= 3, "20 seconds")).toEqual([
          "Acme has won 1 deal",
          'Deal "Kiosk" was archived',
          "Follow up on Kiosk"
        ])

        // An idempotent retry lands on another instance and gets the first answer.
        const key = `n4-${names.run}`
        const first = yield* records("idempotent-create", deal, (r) =>
          r.create({ title: "Once" }, { idempotencyKey: key })
        )
        const retry = yield* records("idempotent-retry", deal, (r) =>
          r.create({ title: "Once" }, { idempotencyKey: key })
        )
        expect(retry.instance).not.toBe(first.instance)
        expect(retry.value.headers.get("idempotency-replayed")).toBe("true")
        expect(retry.value.body.id).toBe(first.value.body.id)
        const once = first.value.body.id
        const created = yield* proxy.send("idempotent-feed", asAlice, (c) =>
          c.call((api) => api.audit.feed({ query: { record: once, limit: 100 } }))
        )
        expect(created.value.body.entries.map((e) => e.operation)).toEqual(["created"])

        // A save on a version another instance moved on from is refused (If-Match, 412).
        const read = yield* records("conflict-read", deal, (r) => r.get(once))
        const etag = read.value.headers.get("etag") ?? ""
        const save = (title: string) => (c: Client) =>
          c.call((api) =>
            api.records.update({
              params: recordPath(deal, once),
              payload: new UpdateRecord({ values: { title } }),
              headers: { "if-match": etag }
            })
          )
        const saved = yield* proxy.send("conflict-save", asAlice, save("Twice"))
        const stale = yield* proxy.send("conflict-stale", asAlice, (c) => refusal(save("Stale")(c)))
        expect(saved.value.status).toBe(200)
        expect(stale.instance).not.toBe(saved.instance)
        expect(stale.value.status).toBe(412)

        // Presence: Alice and Bob on one record see each other whichever instance serves them.
        yield* proxy.send("presence-alice", asAlice, (c) =>
          c.call((api) => api.presence.heartbeat({ params: editorPath(once, "alice-form") }))
        )
        yield* proxy.send("presence-bob", asBob, (c) =>
          c.call((api) => api.presence.heartbeat({ params: editorPath(once, "bob-form") }))
        )
        yield* has([...aliceStreams, ...bobStreams], presenceEvent(deal, once))
        const together = [alice.name, bob.name].sort()
        for (let i = 0; i < instanceCount; i++) {
          const who = i % 2 === 0 ? asAlice : asBob
          expect((yield* proxy.send("presence-list", who, (c) => editorsOn(c, once))).value).toEqual(together)
        }
        yield* proxy.send("presence-leave-bob", asBob, (c) =>
          c.call((api) => api.presence.leave({ params: editorPath(once, "bob-form") }))
        )
        expect((yield* proxy.send("presence-after-leave", asAlice, (c) => editorsOn(c, once))).value).toEqual([
          alice.name
        ])

        // Revocation: Bob's removal, answered by one instance, ends his streams on all of them.
        const removal = yield* proxy.send("remove-bob", asAlice, (c) =>
          c.call((api) => api.members.remove({ params: { userId: bob.id } }))
        )
        const removedAt = Date.now()
        yield* endedWith(bobStreams, "membership-changed")
        const bobEndedMs = Date.now() - removedAt
        expect(bobStreams.some((s) => s.instance !== removal.instance)).toBe(true)

        // Signing out a second session of Alice's ends its streams everywhere, and only its.
        const second = yield* proxy.signIn("sign-in-alice-again", aliceSignIn)
        const secondStreams = yield* proxy.streamOnEvery("broadcast-alice-again", "/api/broadcast", {
          cookie: second.value
        })
        const logout = yield* proxy.send("sign-out", second.value, (c) => c.call((api) => api.auth.logout()))
        const signedOutAt = Date.now()
        yield* endedWith(secondStreams, "signed-out")
        const signedOutEndedMs = Date.now() - signedOutAt
        expect(secondStreams.some((s) => s.instance !== logout.instance)).toBe(true)

        // Every instance now refuses both ended sessions; Alice's first session still works and still streams.
        for (const [who, cookie] of [
          ["bob", asBob],
          ["alice-signed-out", second.value]
        ] as const) {
          // The session caches hear of it over Redis: each instance must refuse within a bound far below AUTH_CACHE_TTL_MS.
          const refused = new Set<number>()
          const me = Effect.tap(
            proxy.send(`me-${who}`, cookie, (c) => settled(c.call((api) => api.auth.me()))),
            (answer) => Effect.sync(() => answer.value.status === 401 && refused.add(answer.instance))
          )
          yield* until(`every instance refuses ${who}`, me, () => refused.size === instanceCount, "10 seconds")
        }
        const after = yield* records("after-revocation", deal, (r) => r.create({ title: "Still heard" }))
        yield* has(aliceStreams, changed(deal, after.value.body.id))

        // Spread: every instance served part of the flow.
        const served = yield* proxy.served
        const perInstance = instances.map((i) => served.filter((s) => s.instance === i.n).length)
        expect(instancesOf(served).size).toBeGreaterThanOrEqual(3)
        console.log(
          [
            `four instances behind nginx: ${served.length} requests through nginx, per instance ${perInstance.join(" / ")}`,
            `  instances started in ${instancesUp - began} ms (with provisioning); whole flow ${Date.now() - began} ms`,
            `  Bob's ${bobStreams.length} streams (instances ${[...instancesOf(bobStreams)].join(",")}) ended ${bobEndedMs} ms after instance ${removal.instance} answered his removal`,
            `  ${secondStreams.length} streams of a signed-out session ended ${signedOutEndedMs} ms after instance ${logout.instance} answered the sign-out`,
            ...served.map((s) => `  ${s.step} -> instance ${s.instance}`)
          ].join("\n")
        )
      }),
    180_000
  )
})
