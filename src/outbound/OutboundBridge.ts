import type { Effect } from "effect"
import { Context } from "effect"
import type { BusinessObjectEvent } from "../events/BusinessObjectEvent"
import type { Workspace } from "../api/Workspace"

/**
 * Where a unit's events go (spec, "Events"): the workflow engine and the
 * broadcast publisher. Neither sees an event of a rolled-back unit.
 */
export interface OutboundBridgeShape {
  /**
   * Inside the transaction, just before the audit flush: hands the events to the
   * workflow engine durably, so they are committed (or rolled back) with the
   * change; each run remembers the unit (`correlationId`) as its parent.
   */
  readonly stage: (
    workspace: Workspace,
    events: ReadonlyArray<BusinessObjectEvent>,
    correlationId: string
  ) => Effect.Effect<void>
  /** After COMMIT: the broadcast hints. Never fails and never makes the writer wait. */
  readonly handOff: (workspace: Workspace, events: ReadonlyArray<BusinessObjectEvent>) => Effect.Effect<void>
}

export class OutboundBridge extends Context.Service<OutboundBridge, OutboundBridgeShape>()("OutboundBridge") {}
