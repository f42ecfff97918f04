// @vitest-environment jsdom
import { cleanup, renderHook } from "@testing-library/react"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import { EditorId } from "../../../src/api/Editor"
import { Schema } from "effect"
import { fallbackPresenceIntervals, usePresenceHeartbeat } from "../../../src/client/react"
import type { PresenceHeartbeatOptions } from "../../../src/client/react"
import type { FetchCall } from "../support/fakes"
import { FakeEventSource, noContent } from "../support/fakes"
import { answer, flush, harness } from "./harness"

/**
 * Spec, tab behaviour 5: a form heartbeats while a persisted operational
 * form holds unsaved edits, and leaves when the edits are saved or
 * discarded, the form unmounts, or the tab fires pagehide.
 */

beforeEach(() => {
  vi.useFakeTimers()
  FakeEventSource.reset()
})
afterEach(() => {
  cleanup()
  vi.useRealTimers()
})

type Props = Omit<PresenceHeartbeatOptions, "businessObject">

const form = (respond?: (call: FetchCall) => Response | Promise<Response>) => {
  const h = harness(respond === undefined ? {} : { respond })
  const view = renderHook((props: Props) => usePresenceHeartbeat(h.client, { businessObject: "crm/deal", ...props }), {
    wrapper: h.wrapper,
    initialProps: { id: "r1", active: false } as Props
  })
  const editorPath = () => `/api/presence/crm/deal/r1/${view.result.current.editorId}`
  /** The presence calls so far, as "PUT" / "DELETE keepalive". */
  const presence = () =>
    h.calls
      .filter((call) => call.path === editorPath())
      .map((call) => (call.init.keepalive === true ? `${call.method} keepalive` : call.method))
  return { ...h, ...view, presence }
}

describe("rule 5: the form heartbeats while it holds unsaved edits", () => {
  it("no edits (inactive): nothing is sent", async () => {
    const { presence } = form()
    await flush(60_000)
    expect(presence()).toEqual([])
  })

  it("edits begin (active): a heartbeat at once (arrival), then one every fallback interval until the server served one", async () => {
    expect(fallbackPresenceIntervals.heartbeatMs).toBe(5_000)
    const { presence, rerender } = form()
    rerender({ id: "r1", active: true })
    await flush()
    expect(presence()).toEqual(["PUT"])
    await flush(4_999)
    expect(presence()).toEqual(["PUT"])
    await flush(1)
    expect(presence()).toEqual(["PUT", "PUT"])
    await flush(10_000)
    expect(presence()).toEqual(["PUT", "PUT", "PUT", "PUT"])
  })

  it("the stream's resync serves the interval: the next heartbeats follow it, without a leave and an arrival", async () => {
    const { presence, rerender, client } = form()
    const stream = client.broadcast.open()
    rerender({ id: "r1", active: true })
    await flush()
    FakeEventSource.instances[0]?.emit("resync", { reason: "open", presence: { heartbeatMs: 20_000, lapseMs: 60_000 } })
    await flush(5_000)
    expect(presence()).toEqual(["PUT", "PUT"])
    await flush(19_999)
    expect(presence()).toEqual(["PUT", "PUT"])
    await flush(1)
    expect(presence()).toEqual(["PUT", "PUT", "PUT"])
    stream.close()
  })

  it("edits saved or discarded (active turns false): it leaves with a keepalive DELETE and stops", async () => {
    const { presence, rerender } = form()
    rerender({ id: "r1", active: true })
    await flush(5_000)
    rerender({ id: "r1", active: false })
    await flush(30_000)
    expect(presence()).toEqual(["PUT", "PUT", "DELETE keepalive"])
  })

  it("the form unmounts: it leaves", async () => {
    const { presence, rerender, unmount } = form()
    rerender({ id: "r1", active: true })
    await flush()
    unmount()
    await flush(30_000)
    expect(presence()).toEqual(["PUT", "DELETE keepalive"])
  })

  it("the tab fires pagehide: it leaves at once, with keepalive; a page restored from the back/forward cache arrives again", async () => {
    const { presence, rerender } = form()
    rerender({ id: "r1", active: true })
    await flush()
    window.dispatchEvent(new Event("pagehide"))
    await flush()
    expect(presence()).toEqual(["PUT", "DELETE keepalive"])
    window.dispatchEvent(new PageTransitionEvent("pageshow", { persisted: true }))
    await flush()
    expect(presence()).toEqual(["PUT", "DELETE keepalive", "PUT"])
  })

  it("a record not saved yet (no id) never heartbeats; the interval is an option", async () => {
    const { presence, rerender, calls } = form()
    rerender({ id: undefined, active: true })
    await flush(30_000)
    expect(calls).toEqual([])
    rerender({ id: "r1", active: true, intervalMs: 1_000 })
    await flush(2_000)
    expect(presence()).toEqual(["PUT", "PUT", "PUT"])
  })

  it("a leave is never overtaken by a heartbeat still in flight", async () => {
    let release: () => void = () => {}
    const slowPut = (call: FetchCall) =>
      call.method === "PUT" ? new Promise<Response>((resolve) => (release = () => resolve(noContent()))) : answer(call)
    const { presence, rerender } = form(slowPut)
    rerender({ id: "r1", active: true })
    await flush()
    rerender({ id: "r1", active: false })
    await flush()
    expect(presence()).toEqual(["PUT"])
    release()
    await flush()
    expect(presence()).toEqual(["PUT", "DELETE keepalive"])
  })

  it("a failed heartbeat goes to onError and the form keeps going; a new onError each render does not restart it", async () => {
    const errors: Array<unknown> = []
    const failing = (call: FetchCall) =>
      call.method === "PUT"
        ? new Response(JSON.stringify({ _tag: "PubSubUnavailable", message: "down" }), { status: 503 })
        : answer(call)
    const { presence, rerender } = form(failing)
    rerender({ id: "r1", active: true, onError: (e) => errors.push(e) })
    await flush()
    rerender({ id: "r1", active: true, onError: (e) => errors.push(e) })
    await flush()
    expect(presence()).toEqual(["PUT"])
    expect(errors).toMatchObject([{ status: 503, _tag: "PubSubUnavailable" }])
    await flush(5_000)
    expect(presence()).toEqual(["PUT", "PUT"])
  })
})

describe("the editor id", () => {
  it("is made once per mount (crypto.randomUUID), valid for the server, kept across renders and sessions of edits", async () => {
    const first = form()
    const id = first.result.current.editorId
    expect(Schema.is(EditorId)(id)).toBe(true)
    first.rerender({ id: "r1", active: true })
    await flush()
    first.rerender({ id: "r1", active: false })
    first.rerender({ id: "r1", active: true })
    await flush()
    expect(first.result.current.editorId).toBe(id)
    expect(new Set(first.calls.map((call) => call.path))).toEqual(new Set([`/api/presence/crm/deal/r1/${id}`]))

    // Another mount (another form, another tab) is another editor.
    const second = form()
    expect(second.result.current.editorId).not.toBe(id)
  })

  it("can be given", async () => {
    const { result, rerender, calls } = form()
    rerender({ id: "r1", active: true, editorId: "form-7" })
    await flush()
    expect(result.current.editorId).toBe("form-7")
    expect(calls.map((call) => `${call.method} ${call.path}`)).toEqual(["PUT /api/presence/crm/deal/r1/form-7"])
  })
})
