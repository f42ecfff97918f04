import type { Effect } from "effect"
import { Context } from "effect"
import type { Workspace } from "../tenancy/Workspace"
import type { BusinessObjectEvent } from "./BusinessObjectEvent"

/**
 * Where committed events go after COMMIT (spec, "Events"): the broadcast
 * publisher (and, later, the workflow engine). `handOff` never fails and
 * never makes the writer wait.
 */
export interface OutboundBridgeShape {
  readonly handOff: (workspace: Workspace, events: ReadonlyArray<BusinessObjectEvent>) => Effect.Effect<void>
}

export class OutboundBridge extends Context.Tag("OutboundBridge")<OutboundBridge, OutboundBridgeShape>() {}
