import { listBusinessObjects } from "./businessObjects"
import type { HydratedAuditEntry } from "./hydration/HydratedValue"
import { hydrateTimeline } from "./hydration/hydrateTimeline"
import { segment } from "./paths"
import type { Transport } from "./transport"
import { TimelinePage } from "./wire"

/** Only `limit`: the client shows the newest page and never pages (spec, "Client:" of the timeline endpoint). */
export interface TimelineOptions {
  /** Rows of the newest page; the server defaults to 50 and clamps into 1..200. */
  readonly limit?: number
}

export interface AuditClient {
  /**
   * The newest page of a record's timeline, newest first, hydrated against
   * the record's **current** schema (fetched from `GET /api/business-objects`
   * alongside the page). `nextCursor` is discarded: paging stays on the
   * endpoint for other callers. Rejects with a `HydrationError` when a
   * field's kind changed since a row was written.
   */
  readonly timeline: (
    businessObject: string,
    id: string,
    options?: TimelineOptions
  ) => Promise<ReadonlyArray<HydratedAuditEntry>>
}

export const auditClient = (transport: Transport): AuditClient => {
  const definitions = listBusinessObjects(transport)
  return {
    timeline: async (businessObject, id, options = {}) => {
      const query = options.limit === undefined ? "" : `?limit=${encodeURIComponent(options.limit)}`
      const path = `/api/audit/business-object/${segment(businessObject)}/${segment(id)}${query}`
      const [page, current] = await Promise.all([transport.json(TimelinePage, "GET", path), definitions()])
      return hydrateTimeline(current, page.entries)
    }
  }
}
