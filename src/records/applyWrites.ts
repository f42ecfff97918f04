import { Effect } from "effect"
import type { RecordWrite } from "../api/RecordWrite"
import type { Records } from "./Records"

/** Applies the writes in order, inside the unit of work in progress. */
export const applyWrites = (records: Records["Service"], writes: ReadonlyArray<RecordWrite>) =>
  Effect.forEach(writes, (write) =>
    write.tool === "create"
      ? records.create(write.businessObject, write.values)
      : records.update(write.businessObject, write.id, write.values)
  )
