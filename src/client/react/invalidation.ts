import type { QueryClient } from "@tanstack/react-query"
import { backlinksQueryKeys, presenceQueryKeys, recordQueryKeys } from "./queryKeys"

/**
 * Marks every query about `businessObject` stale and refetches the active
 * ones: lists, records, timelines. The one invalidation both a local save
 * (`useSaveRecord`) and a `changed` hint do, so the echo of one's own save
 * causes one more refetch, as the spec says.
 */
export const invalidateBusinessObject = (queryClient: QueryClient, businessObject: string): Promise<void> =>
  Promise.all([
    queryClient.invalidateQueries({ queryKey: recordQueryKeys.all(businessObject) }),
    // A record of it may link to any other record: every backlinks panel may change.
    queryClient.invalidateQueries({ queryKey: backlinksQueryKeys.all })
  ]).then(() => undefined)

/** What a `presence` hint does: the editor lists of `businessObject` refetch. */
export const invalidatePresence = (queryClient: QueryClient, businessObject: string): Promise<void> =>
  queryClient.invalidateQueries({ queryKey: presenceQueryKeys.editors(businessObject) })
