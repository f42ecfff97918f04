// @vitest-environment jsdom
import { QueryClientProvider, useQuery } from "@tanstack/react-query"
import { StrictMode } from "react"
import { cleanup, render, renderHook } from "@testing-library/react"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import type { Client } from "../../../src/client"
import {
  editorsQuery,
  fallbackPresenceIntervals,
  invalidateBusinessObject,
  LiveUpdates,
  recordQuery,
  recordQueryKeys,
  recordsQuery,
  timelineQuery,
  useBroadcastInvalidation,
  useEditors,
  useSaveRecord
} from "../../../src/client/react"
import { FakeEventSource, json } from "../support/fakes"
import { answer, flush, harness } from "./harness"
import { me } from "../fixtures"

/**
 * The spec's "Tab behaviour tied to these endpoints", rules 1-4, one block
 * each (rule 5 is presence-heartbeat.test.tsx). The binding and the client
 * are real; fetch and EventSource are faked at the browser boundary, and the
 * clock is fake: intervals are advanced, never slept through.
 */

beforeEach(() => {
  vi.useFakeTimers()
  FakeEventSource.reset()
})
afterEach(() => {
  cleanup()
  vi.useRealTimers()
})

const hint = (businessObject: string, businessObjectId = "r1") => ({ businessObject, businessObjectId })
const resync = (reason: "open" | "resubscribed") => ({ reason, presence: { heartbeatMs: 10_000, lapseMs: 30_000 } })

/** What a record page reads: the deal's list, one deal, its timeline, its editors; and a company list. */
const useRecordPage = (client: Client) => ({
  deals: useQuery(recordsQuery(client, "crm/deal")),
  deal: useQuery(recordQuery(client, "crm/deal", "r1")),
  timeline: useQuery(timelineQuery(client, "crm/deal", "r1", { limit: 20 })),
  companies: useQuery(recordsQuery(client, "crm/company")),
  editors: useEditors(client, "crm/deal")
})

describe("rule 1: the tab opens its stream once per workspace", () => {
  it("mounted three times for one workspace: one EventSource, and one refetch per hint", async () => {
    const { client, wrapper, requests } = harness()
    renderHook(
      () => {
        useBroadcastInvalidation(client, "acme")
        useBroadcastInvalidation(client, "acme")
        return useQuery(recordsQuery(client, "crm/deal"))
      },
      {
        wrapper: ({ children }) =>
          wrapper({
            children: (
              <LiveUpdates client={client} workspace="acme">
                {children}
              </LiveUpdates>
            )
          })
      }
    )
    await flush()
    expect(FakeEventSource.instances).toHaveLength(1)
    expect(FakeEventSource.instances[0]?.url).toBe("/api/broadcast")
    expect(FakeEventSource.instances[0]?.withCredentials).toBe(true)
    expect(requests("/api/records/crm/deal")).toHaveLength(1)

    FakeEventSource.instances[0]?.emit("changed", hint("crm/deal"))
    await flush()
    expect(requests("/api/records/crm/deal")).toHaveLength(2)
  })

  it("one stream per workspace; it closes when the last user of it unmounts", async () => {
    const { client, wrapper } = harness()
    const a = render(<LiveUpdates client={client} workspace="acme" />, { wrapper })
    const b = render(<LiveUpdates client={client} workspace="acme" />, { wrapper })
    const c = render(<LiveUpdates client={client} workspace="globex" />, { wrapper })
    await flush()
    expect(FakeEventSource.open).toHaveLength(2)

    a.unmount()
    await flush()
    expect(FakeEventSource.open).toHaveLength(2)
    b.unmount()
    await flush()
    expect(FakeEventSource.open.map((source) => source.url)).toHaveLength(1)
    c.unmount()
    await flush()
    expect(FakeEventSource.open).toHaveLength(0)
    expect(FakeEventSource.instances).toHaveLength(2)
  })

  it("StrictMode's double mount keeps one stream; no workspace (signed out): none; switching workspace swaps it", async () => {
    const { client, queryClient } = harness()
    // StrictMode at the root of the tree (as in a Vite app's main.tsx): effects run, are cleaned up and run again.
    const tab = (workspace: string | undefined) => (
      <StrictMode>
        <QueryClientProvider client={queryClient}>
          <LiveUpdates client={client} workspace={workspace} />
        </QueryClientProvider>
      </StrictMode>
    )
    const view = render(tab("acme"))
    await flush()
    expect(FakeEventSource.instances).toHaveLength(1)
    expect(FakeEventSource.open).toHaveLength(1)

    view.rerender(tab(undefined))
    await flush()
    expect(FakeEventSource.open).toHaveLength(0)

    view.rerender(tab("globex"))
    await flush()
    expect(FakeEventSource.open).toHaveLength(1)
    expect(FakeEventSource.instances).toHaveLength(2)
  })
})

describe("rule 2: a changed hint invalidates the queries keyed [businessObject, ...], as a local save does", () => {
  it("refetches that business object's list, record and timeline; not another business object's, not presence", async () => {
    const { client, wrapper, count } = harness()
    renderHook(
      () => {
        useBroadcastInvalidation(client, "acme")
        return useRecordPage(client)
      },
      { wrapper }
    )
    await flush()
    const reads = () => [
      count("GET /api/records/crm/deal?limit=100"),
      count("GET /api/records/crm/deal/r1"),
      count("GET /api/audit/business-object/crm%2Fdeal/r1?limit=20"),
      count("GET /api/records/crm/company?limit=100"),
      count("GET /api/presence/crm/deal")
    ]
    expect(reads()).toEqual([1, 1, 1, 1, 1])

    FakeEventSource.instances[0]?.emit("changed", hint("crm/deal"))
    await flush()
    expect(reads()).toEqual([2, 2, 2, 1, 1])

    FakeEventSource.instances[0]?.emit("changed", hint("crm/company"))
    await flush()
    expect(reads()).toEqual([2, 2, 2, 2, 1])
  })

  it("invalidates by prefix: any query whose key starts with the business object name, and no other", async () => {
    const { client, wrapper, queryClient } = harness()
    renderHook(() => useBroadcastInvalidation(client, "acme"), { wrapper })
    await flush()
    const keys = [
      ["crm/deal", "custom", 1],
      ["crm/deal"],
      ["crm/dealer", "list"],
      ["presence", "crm/deal"],
      ["businessObjects"]
    ]
    for (const key of keys) queryClient.setQueryData(key, "cached")
    FakeEventSource.instances[0]?.emit("changed", hint("crm/deal"))
    await flush()
    expect(keys.map((key) => queryClient.getQueryState(key)?.isInvalidated)).toEqual([true, true, false, false, false])
    expect(recordQueryKeys.all("crm/deal")).toEqual(["crm/deal"])
  })

  it("a save invalidates the same queries; the echo of one's own save refetches once more", async () => {
    const { client, wrapper, requests, count } = harness()
    const { result } = renderHook(
      () => {
        useBroadcastInvalidation(client, "acme")
        return { page: useRecordPage(client), save: useSaveRecord(client, "crm/deal") }
      },
      { wrapper }
    )
    await flush()
    const reads = () => ({
      record: count("GET /api/records/crm/deal/r1"),
      timeline: count("GET /api/audit/business-object/crm%2Fdeal/r1?limit=20"),
      companies: count("GET /api/records/crm/company?limit=100")
    })
    expect(reads()).toEqual({ record: 1, timeline: 1, companies: 1 })

    result.current.save.mutate({ id: "r1", values: { title: "Kiosk 2" } })
    await flush()
    expect(requests("PATCH /api/records/crm/deal/r1")).toHaveLength(1)
    expect(reads()).toEqual({ record: 2, timeline: 2, companies: 1 })

    // The service's hint about this very save arrives afterwards.
    FakeEventSource.instances[0]?.emit("changed", hint("crm/deal"))
    await flush()
    expect(reads()).toEqual({ record: 3, timeline: 3, companies: 1 })
  })

  it("a save with no id creates; both go through invalidateBusinessObject", async () => {
    const { client, wrapper, requests, queryClient } = harness()
    const spy = vi.spyOn(queryClient, "invalidateQueries")
    const { result } = renderHook(() => useSaveRecord(client, "crm/deal"), { wrapper })
    result.current.mutate({ values: { title: "New" } })
    await flush()
    expect(requests("POST /api/records/crm/deal")).toHaveLength(1)
    expect(spy).toHaveBeenCalledWith({ queryKey: ["crm/deal"] })
    spy.mockClear()
    await invalidateBusinessObject(queryClient, "crm/deal")
    expect(spy.mock.calls).toEqual([[{ queryKey: ["crm/deal"] }], [{ queryKey: ["backlinks"] }]])
  })
})

describe("resync: hints are at-most-once, so a resync re-reads everything the workspace's caches hold", () => {
  it("every query of every attached cache is invalidated; shown ones refetch at once", async () => {
    const { client, wrapper, requests, queryClient } = harness()
    renderHook(
      () => {
        useBroadcastInvalidation(client, "acme")
        return useRecordPage(client)
      },
      { wrapper }
    )
    await flush()
    const unshown = ["crm/ticket", "record", "t9"]
    queryClient.setQueryData(unshown, "cached")
    const reads = () => [
      requests("/api/records/crm/deal?").length,
      requests("/api/records/crm/deal/r1").length,
      requests("/api/audit/").length,
      requests("/api/records/crm/company").length,
      requests("/api/presence/crm/deal").length
    ]
    expect(reads()).toEqual([1, 1, 1, 1, 1])
    const source = FakeEventSource.instances[0]
    source?.open()
    source?.emit("resync", resync("open"))
    await flush()
    expect(reads()).toEqual([2, 2, 2, 2, 2])
    expect(queryClient.getQueryState(unshown)?.isInvalidated).toBe(true)

    // The instance lost its pub/sub subscription and has it back: the open stream says so.
    source?.emit("resync", resync("resubscribed"))
    await flush()
    expect(reads()).toEqual([3, 3, 3, 3, 3])
  })

  it("a reconnect without a resync refetches nothing (the server's resync is what says hints were missed)", async () => {
    const { client, wrapper, requests } = harness()
    renderHook(
      () => {
        useBroadcastInvalidation(client, "acme")
        return useRecordPage(client)
      },
      { wrapper }
    )
    await flush()
    const source = FakeEventSource.instances[0]
    source?.open()
    source?.drop()
    source?.open()
    await flush()
    expect(requests("/api/records/crm/company")).toHaveLength(1)
  })
})

describe("signed out: the stream's 401 reaches onSignedOut, and the next attach opens a new stream", () => {
  it("refused, /api/auth/session names no one: onSignedOut runs once, no retry; signing in again and remounting opens a fresh stream", async () => {
    const session = { signedIn: true }
    const { client, queryClient } = harness({
      respond: (call) =>
        call.path === "/api/auth/session" ? json(200, { me: session.signedIn ? me : null }) : answer(call)
    })
    const onSignedOut = vi.fn()
    const tab = (workspace: string | undefined) => (
      <QueryClientProvider client={queryClient}>
        <LiveUpdates client={client} workspace={workspace} onSignedOut={onSignedOut} />
      </QueryClientProvider>
    )
    const view = render(tab("acme"))
    await flush()
    session.signedIn = false
    FakeEventSource.instances[0]?.drop({ permanently: true })
    await flush(600_000)
    expect(onSignedOut).toHaveBeenCalledTimes(1)
    expect(FakeEventSource.instances).toHaveLength(1)

    // The page shows its sign-in form (no workspace), the person signs in, the workspace mounts again.
    view.rerender(tab(undefined))
    await flush()
    session.signedIn = true
    view.rerender(tab("acme"))
    await flush()
    expect(FakeEventSource.open).toHaveLength(1)
    expect(FakeEventSource.instances).toHaveLength(2)
  })
})

describe("rule 3: a presence hint invalidates the queries keyed [presence, name]", () => {
  it("refetches that business object's editors only", async () => {
    const { client, wrapper, requests } = harness()
    renderHook(
      () => {
        useBroadcastInvalidation(client, "acme")
        return { page: useRecordPage(client), companyEditors: useEditors(client, "crm/company") }
      },
      { wrapper }
    )
    await flush()
    const recordReads = requests("/api/records/").length + requests("/api/audit/").length
    FakeEventSource.instances[0]?.emit("presence", hint("crm/deal"))
    await flush()
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(2)
    expect(requests("GET /api/presence/crm/company")).toHaveLength(1)
    expect(requests("/api/records/").length + requests("/api/audit/").length).toBe(recordReads)
  })
})

describe("rule 4: editors are refetched on the heartbeat interval, the one the server serves", () => {
  it("every fallback interval until a resync served one, then every served heartbeatMs", async () => {
    expect(fallbackPresenceIntervals.heartbeatMs).toBe(5_000)
    const { client, wrapper, requests } = harness()
    renderHook(
      () => {
        useBroadcastInvalidation(client, "acme")
        return useEditors(client, "crm/deal")
      },
      { wrapper }
    )
    await flush()
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(1)
    await flush(4_999)
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(1)
    await flush(1)
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(2)

    // The server serves 12 s (its resync also re-reads the editors once).
    FakeEventSource.instances[0]?.emit("resync", {
      ...resync("open"),
      presence: { heartbeatMs: 12_000, lapseMs: 36_000 }
    })
    await flush()
    expect(client.broadcast.presenceIntervals().heartbeatMs).toBe(12_000)
    const afterResync = requests("GET /api/presence/crm/deal").length
    await flush(11_999)
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(afterResync)
    await flush(1)
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(afterResync + 1)
  })

  it("the interval is an option; editorsQuery carries the same default", async () => {
    const { client, wrapper, requests } = harness()
    renderHook(() => useEditors(client, "crm/deal", { refetchIntervalMs: 2_000 }), { wrapper })
    await flush(2_000)
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(2)
    const options = editorsQuery(client, "crm/deal")
    expect(typeof options.refetchInterval === "function" ? options.refetchInterval.length : -1).toBeGreaterThanOrEqual(
      0
    )
    expect(options.queryKey).toEqual(["presence", "crm/deal"])
  })
})
