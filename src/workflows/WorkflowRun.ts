import { Schema } from "effect"
import type { Cause } from "../api/Cause"
import { CommittedEvent } from "../events/CommittedEvent"
import { Workspace } from "../api/Workspace"

/** One workflow run as it waits in the durable queue: which workflow, on which committed event. */
export const WorkflowRun = Schema.Struct({
  workspace: Workspace,
  workflowId: Schema.String,
  /** The unit whose event started the run (absent on runs queued before it was kept). */
  parentCorrelationId: Schema.optional(Schema.String),
  event: CommittedEvent
})
export type WorkflowRun = typeof WorkflowRun.Type

/** The cause every write of the run names: the event that triggered it. */
export const triggerCause = (event: CommittedEvent): Cause => ({
  kind: "event",
  businessObject: event.businessObject,
  businessObjectId: event.businessObjectId,
  operation: event.operation
})
