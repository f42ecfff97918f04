import { Schema } from "effect"
import { Operation } from "../api/Cause"
import { JsonObject } from "../api/Json"

/**
 * A business object event as the workflow engine receives it: committed, and
 * durable (it is stored with the unit that made it), so whole state travels
 * with it. The workspace travels beside it, in the run's envelope.
 */
export const CommittedEvent = Schema.Struct({
  operation: Operation,
  businessObject: Schema.String,
  businessObjectId: Schema.String,
  before: Schema.NullOr(JsonObject),
  after: Schema.NullOr(JsonObject)
})
export type CommittedEvent = typeof CommittedEvent.Type
