/**
 * What one feed query saw: the positions of the rows it scanned after the
 * cursor (at most its window, in order) and, among them, those the filters
 * and permissions kept (at most `limit + 1`).
 */
export interface ScannedWindow<A> {
  readonly after: bigint
  readonly limit: number
  /** Rows scanned, and the highest position among them (none scanned: null). */
  readonly scanned: number
  readonly lastScanned: bigint | null
  /** Whether the scan stopped at its window (more rows may follow) rather than at the end of the feed. */
  readonly windowFull: boolean
  readonly matched: ReadonlyArray<A>
  readonly positionOf: (row: A) => bigint
}

export interface WindowPage<A> {
  readonly rows: ReadonlyArray<A>
  readonly next: bigint
  readonly more: boolean
}

/**
 * The page a window gives and where the next one starts. With more matches
 * than `limit`, the page ends at its last row (the rest of the window is
 * scanned again next time). Otherwise the next cursor passes the whole
 * window, the rows the filters left out included, so a consumer moves on
 * even when nothing it may see has been written for a long while. All of
 * it came from one statement's snapshot, in which the visible positions are
 * a prefix of the feed (docs/feed.md, "Order"): nothing below `next` can
 * appear later.
 */
export const pageOfWindow = <A>(window: ScannedWindow<A>): WindowPage<A> => {
  if (window.matched.length > window.limit) {
    const rows = window.matched.slice(0, window.limit)
    const last = rows[rows.length - 1]
    return { rows, next: last === undefined ? window.after : window.positionOf(last), more: true }
  }
  return {
    rows: window.matched,
    next: window.lastScanned ?? window.after,
    more: window.windowFull
  }
}
