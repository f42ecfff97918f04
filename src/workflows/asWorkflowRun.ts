import type { Effect } from "effect"
import type { Cause } from "../api/Cause"
import { withActor, withCause } from "../context/Frames"

/** The actor every write of a workflow run names (spec, "Actor"). */
export const workflowActor = (workflowId: string) => ({ kind: "system", name: `workflow:${workflowId}` }) as const

/** Runs `effect` as workflow `workflowId`, in the frame of the event that triggered it. */
export const asWorkflowRun =
  (workflowId: string, trigger: Cause) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    effect.pipe(withCause(trigger), withActor(workflowActor(workflowId)))
