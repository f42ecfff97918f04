import type { Cause, Operation } from "../api/Cause"
import type { RecordValues } from "../api/Json"
import type { Workspace } from "../api/Workspace"

/**
 * An in-flight business object event: listeners get whole state on every
 * verb (`before` is null for created, `after` is null for deleted). It never
 * crosses the wire; audit rows and broadcasts are made from it.
 */
export interface BusinessObjectEvent {
  readonly workspace: Workspace
  readonly operation: Operation
  readonly businessObject: string
  readonly businessObjectId: string
  /** The record's version this event gave it (a deletion takes one more than the last). */
  readonly version: number
  readonly before: RecordValues | null
  readonly after: RecordValues | null
  /** The frame above the write that caused this event (null: none). */
  readonly cause: Cause | null
}
