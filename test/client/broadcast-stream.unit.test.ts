import { afterEach, beforeEach, describe, expect, it, vi } from "@effect/vitest"
import { createClient, fallbackPresenceIntervals, reconnectDelay } from "../../src/client"
import type { FetchCall } from "./support/fakes"
import { fakeFetch, FakeEventSource, json } from "./support/fakes"
import { me } from "./fixtures"

/**
 * The stream's events beyond hints (resync, end, shutdown), the client's own
 * back-off, and a dead session, against a fake EventSource and a fake
 * `fetch` answering `GET /api/auth/session` (the client asks it when the
 * stream is refused: 200 either way, `me` null when signed out). The clock is fake: delays are advanced, never slept through.
 */

const unauthorized = () => json(401, { _tag: "Unauthorized", message: "sign in" })
const backoff = { baseMs: 1_000, maxMs: 8_000 }
const random = () => 0.5

const setup = (session: { signedIn: boolean } = { signedIn: true }) => {
  const fake = fakeFetch((call: FetchCall) =>
    call.path === "/api/auth/session" ? json(200, { me: session.signedIn ? me : null }) : unauthorized()
  )
  const client = createClient({ baseUrl: "http://svc.test", fetch: fake.fetch, EventSource: FakeEventSource })
  const stream = client.broadcast.open({ backoff, random })
  let signedOut = 0
  stream.onSignedOut(() => signedOut++)
  const probes = () => fake.calls.filter((call) => call.path === "/api/auth/session").length
  return { client, stream, session, probes, signedOut: () => signedOut }
}

const latest = () => {
  const source = FakeEventSource.instances.at(-1)
  if (source === undefined) throw new Error("no EventSource")
  return source
}
const resync = (heartbeatMs: number) => ({ reason: "open", presence: { heartbeatMs, lapseMs: heartbeatMs * 3 } })

beforeEach(() => {
  vi.useFakeTimers()
  FakeEventSource.reset()
})
afterEach(() => vi.useRealTimers())

describe("the stream's events", () => {
  it("resync, end and shutdown reach their handlers decoded; resync serves the presence intervals", () => {
    const { client, stream } = setup()
    const seen: Array<string> = []
    stream.on("resync", (data) => seen.push(`resync ${data.reason} ${data.presence.heartbeatMs}`))
    stream.on("end", (data) => seen.push(`end ${data.reason}`))
    stream.on("shutdown", () => seen.push("shutdown"))
    expect(client.broadcast.presenceIntervals()).toEqual(fallbackPresenceIntervals)
    latest().open()
    latest().emit("resync", resync(2_000))
    latest().emit("end", { reason: "lifetime" })
    latest().emit("shutdown", {})
    latest().emit("resync", { reason: "resubscribed", presence: { heartbeatMs: 7_000, lapseMs: 21_000 } })
    expect(seen).toEqual(["resync open 2000", "end lifetime", "shutdown", "resync resubscribed 7000"])
    expect(client.broadcast.presenceIntervals()).toEqual({ heartbeatMs: 7_000, lapseMs: 21_000 })
    stream.close()
  })

  it("an end that may have taken the session asks for it at once; lifetime, role change or shutdown do not", async () => {
    const { stream, probes, signedOut } = setup()
    latest().open()
    for (const reason of ["lifetime", "role-changed"]) latest().emit("end", { reason })
    latest().emit("shutdown", {})
    await vi.advanceTimersByTimeAsync(0)
    expect(probes()).toBe(0)
    latest().emit("end", { reason: "membership-changed" })
    await vi.advanceTimersByTimeAsync(0)
    expect(probes()).toBe(1)
    latest().emit("end", { reason: "workspace-removed" })
    await vi.advanceTimersByTimeAsync(0)
    expect(probes()).toBe(2)
    expect(signedOut()).toBe(0)
    stream.close()
  })
})

describe("reconnecting", () => {
  it("refused (EventSource gave up) while signed in: reopened after the back-off, which grows while refused and starts over once open", async () => {
    setup()
    latest().drop({ permanently: true })
    await vi.advanceTimersByTimeAsync(reconnectDelay(1, 0.5, backoff) - 1)
    expect(FakeEventSource.instances).toHaveLength(1)
    await vi.advanceTimersByTimeAsync(1)
    expect(FakeEventSource.instances).toHaveLength(2)

    latest().drop({ permanently: true })
    await vi.advanceTimersByTimeAsync(reconnectDelay(2, 0.5, backoff) - 1)
    expect(FakeEventSource.instances).toHaveLength(2)
    await vi.advanceTimersByTimeAsync(1)
    expect(FakeEventSource.instances).toHaveLength(3)

    latest().open()
    latest().drop({ permanently: true })
    await vi.advanceTimersByTimeAsync(reconnectDelay(1, 0.5, backoff))
    expect(FakeEventSource.instances).toHaveLength(4)
  })

  it("errors in a row without an open: EventSource's own retries are stopped after errorsBeforeBackoff and the client backs off", async () => {
    setup()
    const first = latest()
    first.open()
    first.drop()
    first.drop()
    expect(first.readyState).toBe(0)
    first.drop()
    expect(first.readyState).toBe(2)
    await vi.advanceTimersByTimeAsync(reconnectDelay(1, 0.5, backoff))
    expect(FakeEventSource.instances).toHaveLength(2)
    // Still unreachable: each further failure backs off longer.
    latest().drop()
    expect(latest().readyState).toBe(2)
    await vi.advanceTimersByTimeAsync(reconnectDelay(2, 0.5, backoff) - 1)
    expect(FakeEventSource.instances).toHaveLength(2)
    await vi.advanceTimersByTimeAsync(1)
    expect(FakeEventSource.instances).toHaveLength(3)
  })

  it("a drop after an open is left to EventSource (the server's retry:), with no back-off", async () => {
    setup()
    latest().open()
    latest().drop()
    latest().open()
    latest().drop()
    await vi.advanceTimersByTimeAsync(60_000)
    expect(FakeEventSource.instances).toHaveLength(1)
    expect(latest().readyState).toBe(0)
  })
})

describe("a dead session", () => {
  it("refused and /api/auth/session names no one: signed out once, the stream stops for good", async () => {
    const { probes, signedOut } = setup({ signedIn: false })
    latest().drop({ permanently: true })
    await vi.advanceTimersByTimeAsync(0)
    expect(probes()).toBe(1)
    expect(signedOut()).toBe(1)
    await vi.advanceTimersByTimeAsync(600_000)
    expect(FakeEventSource.instances).toHaveLength(1)
    expect(probes()).toBe(1)
  })

  it("end signed-out and then no one signed in: signed out at once, its EventSource closed before it reconnects", async () => {
    const session = { signedIn: true }
    const { signedOut } = setup(session)
    latest().open()
    session.signedIn = false
    latest().emit("end", { reason: "signed-out" })
    await vi.advanceTimersByTimeAsync(0)
    expect(signedOut()).toBe(1)
    expect(latest().readyState).toBe(2)
    await vi.advanceTimersByTimeAsync(600_000)
    expect(FakeEventSource.instances).toHaveLength(1)
  })

  it("close() before the answer: no sign-out, no reopen", async () => {
    const { stream, signedOut } = setup({ signedIn: false })
    latest().drop({ permanently: true })
    stream.close()
    await vi.advanceTimersByTimeAsync(600_000)
    expect(signedOut()).toBe(0)
    expect(FakeEventSource.instances).toHaveLength(1)
  })
})
