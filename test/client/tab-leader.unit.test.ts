import { afterEach, beforeEach, describe, expect, it, vi } from "@effect/vitest"
import { createClient, tabLeaderName } from "../../src/client"
import type { BroadcastStream, TabLocks, TabSharing } from "../../src/client"
import type { FetchCall } from "./support/fakes"
import { fakeFetch, FakeEventSource, json } from "./support/fakes"
import { me } from "./fixtures"

/**
 * The tab leader's protocol (docs/broadcast.md, "The tab leader") between
 * "tabs" of one process: each its own client, Node's own BroadcastChannel
 * (it delivers between instances of one process, asynchronously, as between
 * tabs), and a Web Lock manager faked as a queue per name. The browser's
 * real one is exercised by test/browser/tabs.test.ts.
 */

/** `navigator.locks` as the tab leader uses it: one holder per name, the others queued in order; an abort leaves the queue. */
const fakeLocks = (): TabLocks & { readonly holder: (name: string) => number | undefined } => {
  const queues = new Map<string, Array<{ readonly id: number; readonly run: () => void }>>()
  const held = new Map<string, number>()
  let ids = 0
  const grant = (name: string) => {
    if (held.has(name)) return
    const next = queues.get(name)?.shift()
    if (next === undefined) return
    held.set(name, next.id)
    next.run()
  }
  return {
    holder: (name) => held.get(name),
    request: (name, { signal }, callback) =>
      new Promise<void>((resolve, reject) => {
        const id = ids++
        const queue = queues.get(name) ?? []
        queues.set(name, queue)
        const entry = {
          id,
          run: () =>
            void callback().then(() => {
              held.delete(name)
              resolve()
              grant(name)
            })
        }
        signal.addEventListener("abort", () => {
          const at = queue.indexOf(entry)
          if (at < 0) return
          queue.splice(at, 1)
          reject(new DOMException("aborted", "AbortError"))
        })
        queue.push(entry)
        grant(name)
      })
  }
}

const resync = { reason: "open", presence: { heartbeatMs: 7_000, lapseMs: 21_000 } }
const hint = { businessObject: "crm/deal", businessObjectId: "r1" }

let locks: ReturnType<typeof fakeLocks>
let sharing: TabSharing
let opened: Array<BroadcastStream>
const session = { signedIn: true }

beforeEach(() => {
  FakeEventSource.reset()
  locks = fakeLocks()
  sharing = { locks, BroadcastChannel }
  opened = []
  session.signedIn = true
})
afterEach(() => {
  for (const stream of opened) stream.close()
})

/** A tab: its own client (its own fetch), showing `workspace`, with what its handlers saw. */
const tab = (workspace = "acme") => {
  const fake = fakeFetch((call: FetchCall) =>
    call.path === "/api/auth/me" && session.signedIn ? json(200, me) : json(401, { _tag: "Unauthorized", message: "" })
  )
  const client = createClient({ baseUrl: "http://svc.test", fetch: fake.fetch, EventSource: FakeEventSource })
  const stream = client.broadcast.openShared(workspace, { sharing })
  opened.push(stream)
  const seen: Array<string> = []
  stream.on("changed", (data) => seen.push(`changed ${data.businessObjectId}`))
  stream.on("resync", (data) => seen.push(`resync ${data.reason}`))
  stream.onSignedOut(() => seen.push("signed out"))
  return { client, stream, seen }
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20))

describe("one stream for the tabs of a workspace", () => {
  it("the first tab leads and holds the only EventSource; the others get every event it reads, and the served intervals", async () => {
    const a = tab()
    const b = tab()
    const c = tab()
    await settle()
    expect(FakeEventSource.instances).toHaveLength(1)
    expect(locks.holder(tabLeaderName("acme"))).toBe(0)
    const source = FakeEventSource.instances[0]
    source?.open()
    source?.emit("resync", resync)
    source?.emit("changed", hint)
    await vi.waitFor(() => expect(c.seen).toEqual(["resync open", "changed r1"]))
    expect(a.seen).toEqual(["resync open", "changed r1"])
    expect(b.seen).toEqual(["resync open", "changed r1"])
    expect(b.client.broadcast.presenceIntervals()).toEqual(resync.presence)

    // A tab joining later learns the intervals from the leader at once (no resync of its own).
    const d = tab()
    await vi.waitFor(() => expect(d.client.broadcast.presenceIntervals()).toEqual(resync.presence))
    expect(d.seen).toEqual([])
    expect(FakeEventSource.instances).toHaveLength(1)
  })

  it("the leader closes: the next tab in line opens the stream, and its resync reaches every tab left", async () => {
    const a = tab()
    const b = tab()
    const c = tab()
    await settle()
    a.stream.close()
    await vi.waitFor(() => expect(FakeEventSource.open).toHaveLength(1))
    expect(FakeEventSource.instances).toHaveLength(2)
    const second = FakeEventSource.instances[1]
    second?.open()
    second?.emit("resync", resync)
    second?.emit("changed", hint)
    await vi.waitFor(() => expect(c.seen).toEqual(["resync open", "changed r1"]))
    expect(b.seen).toEqual(["resync open", "changed r1"])
    expect(a.seen).toEqual([])
  })

  it("a follower that closes stops hearing; another workspace has a stream and a channel of its own", async () => {
    const a = tab()
    const b = tab()
    const other = tab("globex")
    await settle()
    expect(FakeEventSource.instances).toHaveLength(2)
    b.stream.close()
    FakeEventSource.instances[0]?.emit("changed", hint)
    await settle()
    expect(a.seen).toEqual(["changed r1"])
    expect(b.seen).toEqual([])
    expect(other.seen).toEqual([])
  })

  it("the leader's stream meets a 401: every tab is signed out, the stream stops and nobody takes it over", async () => {
    const a = tab()
    const b = tab()
    await settle()
    session.signedIn = false
    FakeEventSource.instances[0]?.drop({ permanently: true })
    await vi.waitFor(() => expect(b.seen).toEqual(["signed out"]))
    expect(a.seen).toEqual(["signed out"])
    await settle()
    // The next tab in line may have taken the lock before the message came: its stream is closed too.
    expect(FakeEventSource.open).toHaveLength(0)
    expect(locks.holder(tabLeaderName("acme"))).toBeUndefined()
  })

  it("sharing: false, or a browser without Web Locks: a stream per tab", async () => {
    const client = createClient({ fetch: fakeFetch(() => json(200, me)).fetch, EventSource: FakeEventSource })
    opened.push(client.broadcast.openShared("acme", { sharing: false }))
    opened.push(client.broadcast.openShared("acme", { sharing: false }))
    await settle()
    expect(FakeEventSource.instances).toHaveLength(2)
  })
})
