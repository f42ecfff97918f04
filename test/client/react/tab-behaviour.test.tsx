// @vitest-environment jsdom
import { QueryClientProvider, useQuery } from "@tanstack/react-query"
import { StrictMode } from "react"
import { cleanup, render, renderHook } from "@testing-library/react"
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest"
import type { Client } from "../../../src/client"
import {
  editorsQuery,
  invalidateBusinessObject,
  LiveUpdates,
  PRESENCE_HEARTBEAT_MS,
  recordQuery,
  recordQueryKeys,
  recordsQuery,
  timelineQuery,
  useBroadcastInvalidation,
  useEditors,
  useSaveRecord
} from "../../../src/client/react"
import { FakeEventSource } from "../support/fakes"
import { flush, harness } from "./harness"

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
    await invalidateBusinessObject(queryClient, "crm/deal")
    expect(spy).toHaveBeenLastCalledWith({ queryKey: ["crm/deal"] })
  })

  it("the stream reopening after a drop refetches everything shown (hints sent meanwhile are lost)", async () => {
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
    expect(requests("/api/records/crm/company")).toHaveLength(2)
    expect(requests("/api/presence/crm/deal")).toHaveLength(2)
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

describe("rule 4: editors are refetched on the heartbeat interval", () => {
  it("every PRESENCE_HEARTBEAT_MS (10 000 ms), so that an editor whose tab died drops out", async () => {
    expect(PRESENCE_HEARTBEAT_MS).toBe(10_000)
    const { client, wrapper, requests } = harness()
    renderHook(() => useEditors(client, "crm/deal"), { wrapper })
    await flush()
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(1)
    await flush(9_999)
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(1)
    await flush(1)
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(2)
    await flush(10_000)
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(3)
  })

  it("the interval is an option; editorsQuery carries the same default", async () => {
    const { client, wrapper, requests } = harness()
    renderHook(() => useEditors(client, "crm/deal", { refetchIntervalMs: 2_000 }), { wrapper })
    await flush(2_000)
    expect(requests("GET /api/presence/crm/deal")).toHaveLength(2)
    expect(editorsQuery(client, "crm/deal").refetchInterval).toBe(10_000)
    expect(editorsQuery(client, "crm/deal").queryKey).toEqual(["presence", "crm/deal"])
  })
})
