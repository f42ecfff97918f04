import { useMutation, useQueryClient } from "@tanstack/react-query"
import type { Client, StoredRecord } from "../index"
import type { Values } from "../records"
import { invalidateBusinessObject } from "./invalidation"

/** A save: an update of record `id`, or a create when there is no `id`. */
export interface Save {
  readonly id?: string
  readonly values: Values
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
    mutationFn: ({ id, values }) =>
      id === undefined
        ? client.records.create(businessObject, values)
        : client.records.update(businessObject, id, values),
    onSuccess: () => invalidateBusinessObject(queryClient, businessObject)
  })
}
