import { useInfiniteQuery } from "@tanstack/react-query"
import { useEffect, useMemo, useRef, useState } from "react"
import type { Client, FeedEntry } from "../index"
import type { FeedFilters } from "./queries"
import { feedNewestPagesQuery } from "./queries"

/** The rows a followed feed handed over since `from`, newest first, for one set of filters. */
interface Live {
  readonly key: string
  readonly from: string | undefined
  readonly entries: ReadonlyArray<FeedEntry>
}

/** Rows newest first, each once: the live ones, then the pages' (a row in both keeps its first place). */
export const mergeNewestFirst = (
  live: ReadonlyArray<FeedEntry>,
  pages: ReadonlyArray<ReadonlyArray<FeedEntry>>
): ReadonlyArray<FeedEntry> => {
  const seen = new Set<string>()
  const merged: Array<FeedEntry> = []
  for (const entry of [live, ...pages].flat()) {
    if (seen.has(entry.id)) continue
    seen.add(entry.id)
    merged.push(entry)
  }
  return merged
}

/** The filters without the empty ones, in a fixed order: one key per set of filters. */
const keyOf = (filters: FeedFilters) =>
  JSON.stringify(
    Object.entries(filters)
      .filter(([, value]) => value !== undefined && value !== "")
      .sort(([a], [b]) => (a < b ? -1 : 1))
  )

/**
 * The workspace feed with `filters`, newest first and live: the newest page
 * and older ones on demand (`fetchOlder`), and, on top, every row that
 * commits after the first page was read, as it commits, through the feed's
 * SSE stream followed from that page's `head` (the EventSource resumes from
 * its last event id after a drop). Other filters: another query, another
 * stream.
 */
export const useLiveFeed = (client: Client, filters: FeedFilters) => {
  const key = keyOf(filters)
  const pages = useInfiniteQuery(feedNewestPagesQuery(client, filters))
  const head = pages.data?.pages[0]?.head
  const [live, setLive] = useState<Live>({ key, from: undefined, entries: [] })
  const current: Live = live.key === key ? live : { key, from: undefined, entries: [] }
  // Followed from the head of the first page read for these filters, and kept while they hold.
  const from = current.from ?? head
  // The stream is keyed by `key`: filters equal in content but new as objects must not reopen it.
  const latestFilters = useRef(filters)
  latestFilters.current = filters
  useEffect(() => {
    if (from === undefined) return
    setLive((previous) => (previous.key === key && previous.from === from ? previous : { key, from, entries: [] }))
    const follow = client.audit.follow({
      ...latestFilters.current,
      cursor: from,
      onEntry: (entry) =>
        setLive((previous) =>
          previous.key === key && previous.from === from
            ? { ...previous, entries: [entry, ...previous.entries] }
            : previous
        )
    })
    return () => follow.close()
  }, [client, key, from])
  const entries = useMemo(
    () =>
      mergeNewestFirst(
        current.entries,
        (pages.data?.pages ?? []).map((page) => page.entries)
      ),
    [current.entries, pages.data]
  )
  return {
    entries,
    /** The last page read: an empty one with `more` means the filters left a whole window out; read on. */
    lastPage: pages.data?.pages.at(-1),
    isPending: pages.isPending,
    isError: pages.isError,
    error: pages.error,
    hasOlder: pages.hasNextPage,
    isFetchingOlder: pages.isFetchingNextPage,
    fetchOlder: pages.fetchNextPage
  }
}
