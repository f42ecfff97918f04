import { Context } from "effect"
import type { BusinessObjectEvent } from "./BusinessObjectEvent"

/**
 * The events dispatched in the unit of work in progress. The unit hands them
 * to the outbound bridge after COMMIT; after a rollback they are dropped.
 */
export class EventOutbox extends Context.Tag("EventOutbox")<EventOutbox, Array<BusinessObjectEvent>>() {}
