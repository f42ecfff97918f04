import { Layer } from "effect"
import { JobWorkerLive } from "./JobWorker"
import { WorkflowEngineLive } from "./WorkflowEngine"

/** Both background workers: jobs and workflow runs. Part of the server, not of the admin CLI. */
export const BackgroundWorkersLive = Layer.merge(JobWorkerLive, WorkflowEngineLive)
