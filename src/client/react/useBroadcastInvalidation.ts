import { useQueryClient } from "@tanstack/react-query"
import { useEffect, useRef } from "react"
import type { Client } from "../index"
import { attachBroadcast } from "./sharedBroadcast"

export interface BroadcastInvalidationOptions {
  /**
   * The session is gone: the stream was refused with 401, here or in the
   * tab that holds it for this browser. The stream has stopped; show the
   * sign-in page (and clear the QueryClient).
   */
  readonly onSignedOut?: () => void
}

/**
 * Keeps the broadcast stream of `workspace` open while mounted and turns
 * its events into invalidations of the surrounding QueryClient (spec, tab
 * behaviour 1-3):
 *
 * - `changed` → `invalidateBusinessObject(queryClient, businessObject)`: every
 *   query keyed `[businessObject, ...]` (the same as a local save);
 * - `presence` → the queries keyed `["presence", businessObject]`;
 * - `resync` (every open, and after the server's pub/sub outage) → every
 *   query: hints may have been missed.
 *
 * Mounted any number of times, the tab holds one stream per workspace, and
 * the tabs of the browser share one between them (`client.broadcast.openShared`).
 * `workspace` is the signed-in workspace (e.g. `me.workspace.slug`); pass
 * undefined while signed out: no stream. On sign-out, also clear the
 * QueryClient: keys do not name the workspace.
 */
export const useBroadcastInvalidation = (
  client: Client,
  workspace: string | undefined,
  options: BroadcastInvalidationOptions = {}
): void => {
  const queryClient = useQueryClient()
  // Read through a ref: an inline callback must not reattach the stream on every render.
  const onSignedOut = useRef(options.onSignedOut)
  useEffect(() => {
    onSignedOut.current = options.onSignedOut
  })
  useEffect(
    () =>
      workspace === undefined
        ? undefined
        : attachBroadcast(client, workspace, queryClient, { onSignedOut: () => onSignedOut.current?.() }),
    [client, workspace, queryClient]
  )
}
