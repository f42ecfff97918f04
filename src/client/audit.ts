import { listBusinessObjects } from "./businessObjects"
import type { HydratedAuditEntry } from "./hydration/HydratedValue"
import { hydrateTimeline } from "./hydration/hydrateTimeline"
import { encoded } from "./pathParams"
import type { Transport } from "./transport"
import { timelineDefaultLimit } from "./wire"

export interface TimelineOptions {
  /** Rows of the page: 1..200 (another number rejects with a TypeError), default 50. */
  readonly limit?: number
  /** The `nextCursor` of the page before (the newer one); none asks for the newest page. */
  readonly cursor?: string
}

/** One page of a record's timeline, its rows hydrated. */
export interface HydratedTimelinePage {
  /** Newest first. */
  readonly entries: ReadonlyArray<HydratedAuditEntry>
  /** Asks for the next (older) page; null once this page holds the record's first entry. */
  readonly nextCursor: string | null
}

export interface AuditClient {
  /**
   * A page of a record's timeline, newest first (the newest page without a
   * `cursor`), hydrated against the record's **current** schema (fetched from
   * `GET /api/business-objects` alongside the page). Rejects with a
   * `HydrationError` when a field's kind changed since a row was written.
   */
  readonly timeline: (businessObject: string, id: string, options?: TimelineOptions) => Promise<HydratedTimelinePage>
}

export const auditClient = (transport: Transport): AuditClient => {
  const definitions = listBusinessObjects(transport)
  return {
    timeline: async (businessObject, id, options = {}) => {
      const page = transport.call((api) =>
        api.audit.timeline({
          path: encoded({ businessObject, id }),
          urlParams: {
            limit: options.limit ?? timelineDefaultLimit,
            ...(options.cursor === undefined ? {} : { cursor: options.cursor })
          }
        })
      )
      const [{ entries, nextCursor }, current] = await Promise.all([page, definitions()])
      return { entries: hydrateTimeline(current, entries), nextCursor }
    }
  }
}
