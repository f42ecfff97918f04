import { Layer } from "effect"
import { JobWorkerLive } from "./JobWorker"
import { LedgerDigesterLive } from "./LedgerDigester"
import { PrunerLive } from "./Pruner"
import { WorkflowEngineLive } from "./WorkflowEngine"

/** The background workers: jobs, workflow runs, pruning and ledger digests. Part of the server, not of the admin CLI. */
export const BackgroundWorkersLive = Layer.mergeAll(JobWorkerLive, WorkflowEngineLive, PrunerLive, LedgerDigesterLive)
