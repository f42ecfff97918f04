import type { Effect } from "effect"
import { Context } from "effect"
import type { RecordValues } from "../api/Json"
import type { WriteError } from "./PluginRecords"

/**
 * What plugin code may do with background jobs: enqueue one, inside the unit
 * of work that runs it. The job is written with the unit (a rollback enqueues
 * nothing) and captures the current actor, whom its handler's writes name.
 */
export interface PluginJobsShape {
  /** Enqueues `<namespace>/<job>` with its payload; gives the job's id. */
  readonly enqueue: (job: string, payload: RecordValues) => Effect.Effect<string, WriteError>
}

export class PluginJobs extends Context.Service<PluginJobs, PluginJobsShape>()("PluginJobs") {}
