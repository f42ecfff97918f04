import { Schema } from "effect"
import { Actor } from "../api/Actor"
import { JsonObject } from "../api/Json"
import { Workspace } from "../api/Workspace"

/**
 * A job as it waits in the durable queue. The actor is captured when the job
 * is enqueued and restored before its handler runs; an envelope without one
 * (written by an older version, or by hand) makes every write of its handler fail.
 */
export const JobEnvelope = Schema.Struct({
  workspace: Workspace,
  job: Schema.String,
  payload: JsonObject,
  actor: Schema.NullOr(Actor),
  /** The unit that enqueued the job (absent on jobs queued before it was kept). */
  parentCorrelationId: Schema.optional(Schema.String)
})
export type JobEnvelope = typeof JobEnvelope.Type
