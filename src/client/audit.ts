import type { LedgerDigest } from "../api/AuditApi"
import type { AuditEntry } from "../api/AuditEntry"
import type { CorrelationView, FeedPage } from "../api/Feed"
import type { Definitions } from "./businessObjects"
import type { FeedFollow, FeedFollowFilters, FeedFollowOptions } from "./feedFollow"
import { followFeed } from "./feedFollow"
import type { HydratedAuditEntry } from "./hydration/HydratedValue"
import { HydrationError } from "./hydration/HydrationError"
import { hydrateTimeline } from "./hydration/hydrateTimeline"
import type { Definition } from "./hydration/hydrateTimeline"
import type { Transport } from "./transport"
import { feedDefaultLimit, timelineDefaultLimit } from "./wire"

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

/**
 * Which rows of the workspace feed to read (docs/feed.md): the filters a
 * followed feed takes too (every filter given must hold), and where and how
 * the page reads.
 */
export interface FeedOptions extends FeedFollowFilters {
  /** A page's `nextCursor` or an entry's `cursor`; none starts at the beginning of the feed. */
  readonly cursor?: string
  /** `newest`: the page newest first, backwards from `before` (none: the head); the page carries `head`. */
  readonly order?: "oldest" | "newest"
  /** With `order: "newest"`: rows before this cursor (the previous newest-first page's `nextCursor`). */
  readonly before?: string
  /** Rows of the page: clamped into 1..500 by the service, default 100. */
  readonly limit?: number
  /** Seconds (up to 30) the service may hold the request until a row is there. */
  readonly wait?: number
}

export interface AuditClient {
  /**
   * A page of a record's timeline, newest first (the newest page without a
   * `cursor`), hydrated against the record's **current** schema: the
   * client's kept business object definitions (fetched once, revalidated
   * by ETag when a row does not fit them). Rejects with a `HydrationError`
   * when a field's kind changed since a row was written.
   */
  readonly timeline: (businessObject: string, id: string, options?: TimelineOptions) => Promise<HydratedTimelinePage>
  /**
   * A page of the workspace change feed, oldest first after `cursor`, only
   * rows the caller may read; go on with `nextCursor` (`more`: at once).
   * Rows are as stored (not hydrated).
   */
  readonly feed: (options?: FeedOptions) => Promise<FeedPage>
  /**
   * The feed's rows as they commit, from `cursor` (a newest-first page's
   * `head`), with the same filters, over the feed's SSE stream; resumes
   * after a drop from the last row it handed over. `close` ends it.
   */
  readonly follow: (options: FeedFollowOptions) => FeedFollow
  /** Every row of one unit of work and of its cascade, grouped by unit and cause. */
  readonly correlation: (correlationId: string) => Promise<CorrelationView>
  /**
   * The workspace ledger's head as a signed digest (unsigned where the
   * service has no key); admins only (an `ApiError` 403 otherwise).
   */
  readonly digest: () => Promise<LedgerDigest>
}

/**
 * Rows hydrated against the kept definitions (`kept`, from
 * `definitions.current`). A row that does not fit them may mean the schema
 * changed since they were fetched: they are revalidated (a 304 when nothing
 * changed) and the rows tried once more.
 */
export const hydrateWithDefinitions = async (
  definitions: Definitions,
  kept: ReadonlyArray<Definition>,
  entries: ReadonlyArray<AuditEntry>
): Promise<ReadonlyArray<HydratedAuditEntry>> => {
  try {
    return hydrateTimeline(kept, entries)
  } catch (error) {
    if (!(error instanceof HydrationError)) throw error
    const fresh = await definitions.revalidate()
    if (fresh === kept) throw error
    return hydrateTimeline(fresh, entries)
  }
}

export const auditClient = (transport: Transport, definitions: Definitions): AuditClient => ({
  timeline: async (businessObject, id, options = {}) => {
    const page = transport.call((api) =>
      api.audit.timeline({
        params: { businessObject, id },
        query: {
          limit: options.limit ?? timelineDefaultLimit,
          ...(options.cursor === undefined ? {} : { cursor: options.cursor })
        }
      })
    )
    // Asked together: the definitions cost nothing once kept, and the first page waits for neither.
    const [{ entries, nextCursor }, kept] = await Promise.all([page, definitions.current(businessObject)])
    return { entries: await hydrateWithDefinitions(definitions, kept, entries), nextCursor }
  },
  feed: ({ limit, ...filters } = {}) =>
    transport.call((api) => api.audit.feed({ query: { limit: limit ?? feedDefaultLimit, ...filters } })),
  follow: (options) => followFeed(transport, options),
  correlation: (correlationId) => transport.call((api) => api.audit.correlation({ params: { id: correlationId } })),
  digest: () => transport.call((api) => api.audit.digest())
})
