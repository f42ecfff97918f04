import { infiniteQueryOptions, queryOptions } from "@tanstack/react-query"
import type { Client, FeedOptions, ListOptions } from "../index"
import { backlinksQueryKeys, definitionsQueryKey, feedQueryKeys, presenceQueryKeys, recordQueryKeys } from "./queryKeys"

/**
 * Query options (for `useQuery`, `useSuspenseQuery`, `prefetchQuery`) of
 * what the client reads, under the keys of `queryKeys.ts`.
 */

export const businessObjectsQuery = (client: Client) =>
  queryOptions({ queryKey: definitionsQueryKey, queryFn: () => client.businessObjects() })

/** The plugins' labels, read with the definitions (same request, same kept list). */
export const labelsQuery = (client: Client) =>
  queryOptions({ queryKey: [...definitionsQueryKey, "labels"] as const, queryFn: () => client.labels() })

export const recordsQuery = (client: Client, businessObject: string, options: { readonly limit?: number } = {}) =>
  queryOptions({
    queryKey: recordQueryKeys.list(businessObject, options),
    queryFn: () => client.records.list(businessObject, options)
  })

/** The page param of a list's first page: no cursor (a cursor is never empty). */
const firstPage: string = ""

/** A list page by page (`client.records.page`): `fetchNextPage` goes on from the last page's `nextCursor`. */
export const recordPagesQuery = (client: Client, businessObject: string, options: Omit<ListOptions, "cursor">) =>
  infiniteQueryOptions({
    queryKey: recordQueryKeys.listPages(businessObject, options),
    queryFn: ({ pageParam }) =>
      client.records.page(businessObject, pageParam === firstPage ? options : { ...options, cursor: pageParam }),
    initialPageParam: firstPage,
    getNextPageParam: (page) => page.nextCursor ?? undefined
  })

/** What links to a record (`client.records.backlinks`). */
export const backlinksQuery = (client: Client, businessObject: string, id: string) =>
  queryOptions({
    queryKey: backlinksQueryKeys.of(businessObject, id),
    queryFn: () => client.records.backlinks(businessObject, id)
  })

export const recordQuery = (client: Client, businessObject: string, id: string) =>
  queryOptions({
    queryKey: recordQueryKeys.record(businessObject, id),
    queryFn: () => client.records.get(businessObject, id)
  })

/**
 * The record as it was just after the timeline entry `asOf` (its id) or at
 * the instant `asOf` (`client.records.asOf`). An entry's past never changes:
 * it is not refetched while cached.
 */
export const recordAsOfQuery = (client: Client, businessObject: string, id: string, asOf: string) =>
  queryOptions({
    queryKey: recordQueryKeys.asOf(businessObject, id, asOf),
    queryFn: () => client.records.asOf(businessObject, id, asOf),
    staleTime: Number.POSITIVE_INFINITY
  })

/** The newest page's rows, hydrated (`client.audit.timeline`): a `HydrationError` is the query's error. */
export const timelineQuery = (
  client: Client,
  businessObject: string,
  id: string,
  options: { readonly limit?: number } = {}
) =>
  queryOptions({
    queryKey: recordQueryKeys.timeline(businessObject, id, options),
    queryFn: async () => (await client.audit.timeline(businessObject, id, options)).entries
  })

/** The first page's parameter: no cursor, the newest page (a string, as the later pages' cursors are). */
const newestPage = ""

/**
 * The whole timeline, a page at a time (for `useInfiniteQuery`): the first
 * page is the newest, `fetchNextPage` asks for the next older one with the
 * `nextCursor` of the last, and `hasNextPage` is false once the record's
 * first entry is loaded. An invalidation (a save, a `changed` hint) refetches
 * the pages loaded so far, newest first.
 */
export const timelinePagesQuery = (
  client: Client,
  businessObject: string,
  id: string,
  options: { readonly limit?: number } = {}
) =>
  infiniteQueryOptions({
    queryKey: recordQueryKeys.timelinePages(businessObject, id, options),
    queryFn: ({ pageParam }) =>
      client.audit.timeline(businessObject, id, pageParam === newestPage ? options : { ...options, cursor: pageParam }),
    initialPageParam: newestPage,
    getNextPageParam: (page) => page.nextCursor ?? undefined
  })

/**
 * Live editors, refetched every `refetchIntervalMs` so that a dead tab's
 * editor drops out. Default: the served heartbeat interval
 * (`client.broadcast.presenceIntervals()`, read before each refetch).
 */
export const editorsQuery = (
  client: Client,
  businessObject: string,
  options: { readonly refetchIntervalMs?: number } = {}
) =>
  queryOptions({
    queryKey: presenceQueryKeys.editors(businessObject),
    queryFn: () => client.presence.list(businessObject),
    refetchInterval: () => options.refetchIntervalMs ?? client.broadcast.presenceIntervals().heartbeatMs
  })

/** The feed's filters, without paging: what `feedPagesQuery` is keyed by. */
export type FeedFilters = Omit<FeedOptions, "cursor" | "wait">

/**
 * The workspace feed, oldest first, a page at a time from the start (or
 * from `start`, a cursor): `fetchNextPage` reads the rows after the last
 * page. The feed never ends: the last page's `more` false means caught up,
 * and the next fetch reads what has committed since.
 */
export const feedPagesQuery = (client: Client, filters: FeedFilters = {}, start = "") =>
  infiniteQueryOptions({
    queryKey: feedQueryKeys.pages({ ...filters, start }),
    queryFn: ({ pageParam }) => client.audit.feed(pageParam === "" ? filters : { ...filters, cursor: pageParam }),
    initialPageParam: start,
    getNextPageParam: (page) => page.nextCursor
  })

/**
 * The workspace feed newest first (`order: "newest"`), a page at a time
 * backwards from the head: `fetchNextPage` reads the next older page while
 * `hasNextPage`. The first page's `head` is where to follow the feed from
 * (`client.audit.follow`, `useLiveFeed`), so it is not refetched by itself:
 * what commits later comes through the stream.
 */
export const feedNewestPagesQuery = (client: Client, filters: FeedFilters = {}) =>
  infiniteQueryOptions({
    queryKey: feedQueryKeys.pages({ ...filters, order: "newest" }),
    queryFn: ({ pageParam }) =>
      client.audit.feed({ ...filters, order: "newest", ...(pageParam === "" ? {} : { before: pageParam }) }),
    initialPageParam: "",
    getNextPageParam: (page) => (page.more ? page.nextCursor : undefined),
    staleTime: Number.POSITIVE_INFINITY,
    refetchOnWindowFocus: false
  })

/** One unit of work and its cascade (`client.audit.correlation`). */
export const correlationQuery = (client: Client, correlationId: string) =>
  queryOptions({
    queryKey: feedQueryKeys.correlation(correlationId),
    queryFn: () => client.audit.correlation(correlationId)
  })
