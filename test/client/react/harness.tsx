import { QueryClient, QueryClientProvider } from "@tanstack/react-query"
import { act } from "@testing-library/react"
import { vi } from "vitest"
import type { ReactNode } from "react"
import { createClient } from "../../../src/client"
import type { FetchCall } from "../support/fakes"
import { fakeFetch, FakeEventSource, json, noContent } from "../support/fakes"

const record = (businessObject: string, id: string) => ({
  id,
  businessObject,
  state: "operational",
  version: 1,
  values: { title: "Kiosk" },
  createdAt: "2026-03-01T09:30:00.123456Z",
  updatedAt: "2026-03-01T09:30:00.123456Z"
})

/** The service's answers, at the browser boundary. */
export const answer = (call: FetchCall): Response => {
  const path = new URL(call.url, "http://page.test").pathname
  if (path === "/api/business-objects") return json(200, { businessObjects: [] })
  if (path.startsWith("/api/audit/")) return json(200, { entries: [], nextCursor: null })
  if (path.startsWith("/api/presence/")) return call.method === "GET" ? json(200, { records: {} }) : noContent()
  const [, , , namespace, name, id] = path.split("/")
  const businessObject = `${namespace}/${name}`
  if (id === undefined)
    return call.method === "GET" ? json(200, { records: [] }) : json(201, record(businessObject, "new"))
  return json(200, record(businessObject, id))
}

/**
 * A real client and QueryClient over a fake fetch and the fake EventSource:
 * the binding under test runs as in a tab.
 */
export const harness = (options: { readonly respond?: (call: FetchCall) => Response | Promise<Response> } = {}) => {
  const fake = fakeFetch(options.respond ?? answer)
  const client = createClient({ fetch: fake.fetch, EventSource: FakeEventSource })
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, gcTime: Infinity, staleTime: 0 } } })
  const wrapper = ({ children }: { readonly children: ReactNode }) => (
    <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>
  )
  /** The calls made so far as `METHOD path?query`, only those whose line contains `filter`. */
  const requests = (filter = "") =>
    fake.calls.map((call) => `${call.method} ${call.path}`).filter((line) => line.includes(filter))
  /** How many calls were exactly `METHOD path?query`. */
  const count = (line: string) => fake.calls.filter((call) => `${call.method} ${call.path}` === line).length
  return { client, queryClient, wrapper, calls: fake.calls, requests, count }
}

/**
 * With fake timers (every binding test uses them): advances the clock by `ms`
 * inside act(), then lets what that started (fetches, React Query's batched
 * notifications, which wait on a 0 ms timer) settle.
 */
export const flush = async (ms = 0) => {
  await act(async () => {
    await vi.advanceTimersByTimeAsync(ms)
  })
  for (let i = 0; i < 3; i++) {
    await act(async () => {
      await vi.advanceTimersByTimeAsync(0)
    })
  }
}
