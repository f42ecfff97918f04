import { useQuery } from "@tanstack/react-query"
import type { Client } from "../index"
import { editorsQuery } from "./queries"

export interface UseEditorsOptions {
  /** Default: the served heartbeat interval (an editor whose tab died lapses server-side and drops out at the next refetch). */
  readonly refetchIntervalMs?: number
  readonly enabled?: boolean
}

/**
 * Live editors of `businessObject` by record id (`["presence", name]`),
 * refetched on the heartbeat interval and whenever a `presence` hint arrives
 * (with `LiveUpdates` mounted). Spec, tab behaviour 3 and 4.
 */
export const useEditors = (client: Client, businessObject: string, options: UseEditorsOptions = {}) =>
  useQuery({ ...editorsQuery(client, businessObject, options), enabled: options.enabled ?? true })
