import { Option } from "effect"

/**
 * A place in a workspace's feed: the position of the last row passed. The
 * feed serves rows with a position above it, in position order, which is
 * the workspace's commit order (docs/feed.md, "Order"). Position 0 is the
 * start, before every row.
 */
export interface FeedPosition {
  readonly position: bigint
}

const maxBigint = 9223372036854775807n
const prefix = "feed:"

/** Opaque to clients: base64url of `feed:<position>`. */
export const encodeFeedCursor = (at: FeedPosition): string =>
  Buffer.from(`${prefix}${at.position}`).toString("base64url")

/** The start of the feed: every row comes after it. */
export const feedStart: FeedPosition = { position: 0n }

/** None for anything that is not a feed cursor this service made (tampered, truncated, a timeline cursor). */
export const decodeFeedCursor = (cursor: string): Option.Option<FeedPosition> => {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return Option.none()
  const text = Buffer.from(cursor, "base64url").toString("utf8")
  const match = /^feed:(0|[1-9]\d{0,18})$/.exec(text)
  if (match === null || match[1] === undefined) return Option.none()
  const position = BigInt(match[1])
  // Only the canonical spelling: a cursor with stray bits in its last character is not one we made.
  if (position > maxBigint || encodeFeedCursor({ position }) !== cursor) return Option.none()
  return Option.some({ position })
}
