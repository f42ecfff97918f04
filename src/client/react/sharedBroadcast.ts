import type { QueryClient } from "@tanstack/react-query"
import type { BroadcastStream } from "../broadcast"
import type { Client } from "../index"
import { invalidateBusinessObject, invalidatePresence } from "./invalidation"

/** One open stream of one workspace, the query caches it refreshes (a count per cache: it may be attached twice), and who wants to hear of a sign-out. */
interface Shared {
  readonly stream: BroadcastStream
  readonly caches: Map<QueryClient, number>
  readonly signedOutListeners: Set<() => void>
}

/** Per client, per workspace: module state, so one per tab (spec, tab behaviour 1); the tabs share one stream between them (`openShared`). */
const streams = new WeakMap<Client, Map<string, Shared>>()

const open = (client: Client, workspace: string, byWorkspace: Map<string, Shared>): Shared => {
  const stream = client.broadcast.openShared(workspace)
  const caches = new Map<QueryClient, number>()
  const signedOutListeners = new Set<() => void>()
  const shared: Shared = { stream, caches, signedOutListeners }
  stream.on("changed", ({ businessObject }) => {
    for (const cache of caches.keys()) void invalidateBusinessObject(cache, businessObject)
  })
  stream.on("presence", ({ businessObject }) => {
    for (const cache of caches.keys()) void invalidatePresence(cache, businessObject)
  })
  // Hints are at-most-once: whatever this workspace's caches hold may have missed one.
  stream.on("resync", () => {
    for (const cache of caches.keys()) void cache.invalidateQueries()
  })
  // The stream has stopped for good: the next attach (after signing in) opens a new one.
  stream.onSignedOut(() => {
    if (byWorkspace.get(workspace) === shared) byWorkspace.delete(workspace)
    for (const listener of [...signedOutListeners]) listener()
  })
  return shared
}

export interface AttachOptions {
  /** The stream met a 401 (in this tab, or in the tab holding it): show the sign-in page. */
  readonly onSignedOut?: () => void
}

/**
 * Attaches `queryClient` to the broadcast stream of `workspace`, opening it
 * if this tab has none yet; returns the function that detaches it. However
 * many components attach, the tab holds one stream per workspace (and each
 * cache is invalidated once per hint); the stream closes when the last one
 * detaches. Closing waits a microtask, so React's StrictMode remount (detach
 * then attach at once) keeps the same stream.
 */
export const attachBroadcast = (
  client: Client,
  workspace: string,
  queryClient: QueryClient,
  options: AttachOptions = {}
): (() => void) => {
  const byWorkspace = streams.get(client) ?? new Map<string, Shared>()
  streams.set(client, byWorkspace)
  const shared = byWorkspace.get(workspace) ?? open(client, workspace, byWorkspace)
  byWorkspace.set(workspace, shared)
  shared.caches.set(queryClient, (shared.caches.get(queryClient) ?? 0) + 1)
  const onSignedOut = options.onSignedOut
  const listener = onSignedOut === undefined ? undefined : () => onSignedOut()
  if (listener !== undefined) shared.signedOutListeners.add(listener)

  let attached = true
  return () => {
    if (!attached) return
    attached = false
    if (listener !== undefined) shared.signedOutListeners.delete(listener)
    const count = (shared.caches.get(queryClient) ?? 1) - 1
    if (count > 0) shared.caches.set(queryClient, count)
    else shared.caches.delete(queryClient)
    queueMicrotask(() => {
      if (shared.caches.size > 0) return
      if (byWorkspace.get(workspace) === shared) byWorkspace.delete(workspace)
      shared.stream.close()
    })
  }
}
