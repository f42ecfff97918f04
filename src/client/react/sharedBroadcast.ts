import type { QueryClient } from "@tanstack/react-query"
import type { BroadcastStream } from "../broadcast"
import type { Client } from "../index"
import { invalidateBusinessObject, invalidatePresence } from "./invalidation"

/** One open stream of one workspace and the query caches it refreshes (a count per cache: it may be attached twice). */
interface Shared {
  readonly stream: BroadcastStream
  readonly caches: Map<QueryClient, number>
}

/** Per client, per workspace: module state, so one per tab (spec, tab behaviour 1). */
const streams = new WeakMap<Client, Map<string, Shared>>()

const open = (client: Client): Shared => {
  const stream = client.broadcast.open()
  const caches = new Map<QueryClient, number>()
  stream.on("changed", ({ businessObject }) => {
    for (const cache of caches.keys()) void invalidateBusinessObject(cache, businessObject)
  })
  stream.on("presence", ({ businessObject }) => {
    for (const cache of caches.keys()) void invalidatePresence(cache, businessObject)
  })
  // Hints sent while the stream was down are lost for good: everything shown may be stale.
  stream.onReconnect(() => {
    for (const cache of caches.keys()) void cache.invalidateQueries()
  })
  return { stream, caches }
}

/**
 * Attaches `queryClient` to the broadcast stream of `workspace`, opening it
 * if this tab has none yet; returns the function that detaches it. However
 * many components attach, the tab holds one stream per workspace (and each
 * cache is invalidated once per hint); the stream closes when the last one
 * detaches. Closing waits a microtask, so React's StrictMode remount (detach
 * then attach at once) keeps the same stream.
 */
export const attachBroadcast = (client: Client, workspace: string, queryClient: QueryClient): (() => void) => {
  const byWorkspace = streams.get(client) ?? new Map<string, Shared>()
  streams.set(client, byWorkspace)
  const shared = byWorkspace.get(workspace) ?? open(client)
  byWorkspace.set(workspace, shared)
  shared.caches.set(queryClient, (shared.caches.get(queryClient) ?? 0) + 1)

  let attached = true
  return () => {
    if (!attached) return
    attached = false
    const count = (shared.caches.get(queryClient) ?? 1) - 1
    if (count > 0) shared.caches.set(queryClient, count)
    else shared.caches.delete(queryClient)
    queueMicrotask(() => {
      if (shared.caches.size > 0 || byWorkspace.get(workspace) !== shared) return
      byWorkspace.delete(workspace)
      shared.stream.close()
    })
  }
}
