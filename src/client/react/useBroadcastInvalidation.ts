import { useQueryClient } from "@tanstack/react-query"
import { useEffect } from "react"
import type { Client } from "../index"
import { attachBroadcast } from "./sharedBroadcast"

/**
 * Keeps the tab's broadcast stream of `workspace` open while mounted and
 * turns its hints into invalidations of the surrounding QueryClient (spec,
 * tab behaviour 1-3):
 *
 * - `changed` → `invalidateBusinessObject(queryClient, businessObject)`: every
 *   query keyed `[businessObject, ...]` (the same as a local save);
 * - `presence` → the queries keyed `["presence", businessObject]`;
 * - the stream reopening after a drop → every query (hints were missed).
 *
 * Mounted any number of times, the tab holds one stream per workspace.
 * `workspace` is the signed-in workspace (e.g. `me.workspace.slug`); pass
 * undefined while signed out: no stream. On sign-out, also clear the
 * QueryClient: keys do not name the workspace.
 */
export const useBroadcastInvalidation = (client: Client, workspace: string | undefined): void => {
  const queryClient = useQueryClient()
  useEffect(
    () => (workspace === undefined ? undefined : attachBroadcast(client, workspace, queryClient)),
    [client, workspace, queryClient]
  )
}
