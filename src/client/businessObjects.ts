import type { Transport } from "./transport"
import type { BusinessObjectDefinition } from "./wire"

/** `GET /api/business-objects`: the types the caller may read, with their current fields. */
export const listBusinessObjects =
  (transport: Transport) => async (): Promise<ReadonlyArray<BusinessObjectDefinition>> =>
    (await transport.call((api) => api.businessObjects.list({ headers: {} }))).businessObjects
