import { useMutation, useQueryClient } from "@tanstack/react-query"
import type { Client } from "../index"
import { invalidateBusinessObject } from "./invalidation"

/** A write on one record other than a save: a lifecycle step, a plugin action or the deletion. */
export type RecordCommand =
  | {
      readonly kind: "publish" | "archive" | "restore" | "remove"
      readonly id: string
      readonly ifMatch?: number | "*"
    }
  | { readonly kind: "action"; readonly action: string; readonly id: string; readonly ifMatch?: number | "*" }

const run = (client: Client, businessObject: string, command: RecordCommand): Promise<unknown> => {
  const options = command.ifMatch === undefined ? {} : { ifMatch: command.ifMatch }
  switch (command.kind) {
    case "action":
      return client.records.action(businessObject, command.action, command.id, options)
    case "remove":
      return client.records.remove(businessObject, command.id, options)
    default:
      return client.records[command.kind](businessObject, command.id, options)
  }
}

/**
 * Runs a `RecordCommand` on a record of `businessObject` and then does what
 * a save does: `invalidateBusinessObject`. A stale `ifMatch` rejects with a
 * `VersionConflictError`.
 */
export const useRecordCommand = (client: Client, businessObject: string) => {
  const queryClient = useQueryClient()
  return useMutation<unknown, Error, RecordCommand>({
    mutationFn: (command) => run(client, businessObject, command),
    onSuccess: (_, command) => {
      const refetched = invalidateBusinessObject(queryClient, businessObject)
      // A deleted record's own queries refetch into a 404: the caller (leaving its page) need not wait for that.
      return command.kind === "remove" ? undefined : refetched
    }
  })
}
