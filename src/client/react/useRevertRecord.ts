import { useMutation, useQueryClient } from "@tanstack/react-query"
import type { Client, Revert, StoredRecord } from "../index"
import { invalidateBusinessObject } from "./invalidation"

/** A revert of record `id` (docs/history.md), on the version shown (`ifMatch`). */
export interface RevertCommand {
  readonly id: string
  readonly revert: Revert
  readonly ifMatch?: number | "*"
}

/**
 * Reverts a record of `businessObject` to an entry, or undoes one entry,
 * then does what a save does: `invalidateBusinessObject`. A stale `ifMatch`
 * rejects with a `VersionConflictError`; an undo of fields changed again
 * since with a `ChangedSinceError` (send it again with `force: true`).
 */
export const useRevertRecord = (client: Client, businessObject: string) => {
  const queryClient = useQueryClient()
  return useMutation<StoredRecord, Error, RevertCommand>({
    mutationFn: ({ id, revert, ifMatch }) =>
      client.records.revert(businessObject, id, revert, ifMatch === undefined ? {} : { ifMatch }),
    onSuccess: () => invalidateBusinessObject(queryClient, businessObject)
  })
}
