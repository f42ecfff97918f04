import { Context } from "effect"
import type { Workspace } from "../api/Workspace"
import type { AuditStaging } from "./AuditStaging"
import type { BusinessObjectEvent } from "../events/BusinessObjectEvent"

/**
 * The unit of work in progress, provided once by `UnitOfWork.run` for its
 * transaction only. Code that must write inside a unit (records, the audit
 * listener, job enqueueing, run claims) requires it, so it cannot be run
 * outside one.
 */
export class CurrentUnit extends Context.Service<
  CurrentUnit,
  {
    /** The workspace the unit writes to: a unit never spans two. */
    readonly workspace: Workspace
    /** Shared by every audit row of the unit, and kept across its retries. */
    readonly correlationId: string
    /** The unit's audit rows, written by one INSERT as the last statement before COMMIT. */
    readonly staging: AuditStaging
    /** The events dispatched so far: handed to the outbound bridge, durably before COMMIT, published after. */
    readonly outbox: Array<BusinessObjectEvent>
  }
>()("CurrentUnit") {}
