import { useMutation, useQueryClient } from "@tanstack/react-query"
import type { Client, StoredRecord } from "../index"
import type { Values } from "../records"
import { invalidateBusinessObject } from "./invalidation"

/** A save: an update of record `id`, or a create when there is no `id`. */
export interface Save {
  readonly id?: string
  readonly values: Values
  /**
   * An update's `If-Match`: the version the edits were made on. A record
   * that has moved on rejects the save with a `VersionConflictError`.
   */
  readonly ifMatch?: number | "*"
}

/**
 * Saves a record of `businessObject` and then does exactly what a `changed`
 * hint does: `invalidateBusinessObject` (spec, tab behaviour 2). The local
 * save never waits for the broadcast; the hint of this very save arrives
 * afterwards and refetches once more.
 */
export const useSaveRecord = (client: Client, businessObject: string) => {
  const queryClient = useQueryClient()
  return useMutation<StoredRecord, Error, Save>({
    mutationFn: ({ id, values, ifMatch }) =>
      id === undefined
        ? client.records.create(businessObject, values)
        : client.records.update(businessObject, id, values, ifMatch === undefined ? {} : { ifMatch }),
    onSuccess: () => invalidateBusinessObject(queryClient, businessObject)
  })
}
