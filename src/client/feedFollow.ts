import { Result, Schema } from "effect"
import { ResponseShapeError } from "./errors"
import type { BackoffOptions } from "./reconnectBackoff"
import { defaultBackoff, reconnectDelay } from "./reconnectBackoff"
import type { Transport } from "./transport"
import type { FeedEntry as FeedEntryType, StreamEndReason } from "./wire"
import { FeedEntry, StreamEnd } from "./wire"
import { fromJsonText } from "../json/fromJsonText"

/** The filters a followed feed keeps (docs/feed.md, "Filters"); every one given must hold. */
export interface FeedFollowFilters {
  readonly businessObject?: string
  readonly record?: string
  /** An actor's id, or a system actor's name. */
  readonly actor?: string
  readonly correlationId?: string
  /** ISO-8601: rows at or after it. */
  readonly from?: string
  /** ISO-8601: rows before it. */
  readonly to?: string
}

export interface FeedFollowOptions extends FeedFollowFilters {
  /** Where to start: a newest-first page's `head`, a page's `nextCursor` or an entry's `cursor`. */
  readonly cursor: string
  /** Each row as it commits, oldest first, once. */
  readonly onEntry: (entry: FeedEntryType) => void
  /** The service ended the stream for good for this reason (`signed-out`): it is closed. */
  readonly onEnd?: (reason: StreamEndReason) => void
  /** A datum that does not decode, or a refused stream (reopened after a back-off). */
  readonly onError?: (error: unknown) => void
  readonly backoff?: Partial<BackoffOptions>
  readonly random?: () => number
}

export interface FeedFollow {
  readonly close: () => void
}

const CLOSED = 2
const decodeEntry = Schema.decodeUnknownResult(fromJsonText(FeedEntry))
const decodeEnd = Schema.decodeUnknownResult(fromJsonText(StreamEnd))

/** Ends after which asking again cannot succeed: the caller's session is gone. */
const finalEnds: ReadonlySet<StreamEndReason> = new Set(["signed-out", "session-expired", "membership-changed"])

/** The feed's URL with its filters and a cursor. */
export const feedUrl = (transport: Transport, filters: FeedFollowFilters, cursor: string): string => {
  const query = new URLSearchParams()
  for (const [name, value] of Object.entries(filters)) {
    if (typeof value === "string" && value !== "") query.set(name, value)
  }
  query.set("cursor", cursor)
  return transport.url(`/api/audit/feed?${query.toString()}`)
}

/**
 * The workspace feed's rows as they commit, over an EventSource on
 * `GET /api/audit/feed` (`text/event-stream`). The EventSource reconnects
 * by itself after the service ended the stream (drain, lifetime, a grant
 * changed) and sends `Last-Event-ID`, so nothing is lost or repeated; a
 * stream refused outright (a 503, a network fault) is reopened after a
 * back-off from the last entry seen.
 */
export const followFeed = (transport: Transport, options: FeedFollowOptions): FeedFollow => {
  const { cursor, onEntry, onEnd, onError, backoff, random, ...filters } = options
  const delays = { ...defaultBackoff, ...backoff }
  let last = cursor
  let source: { close(): void } | undefined
  let stopped = false
  let retry: ReturnType<typeof setTimeout> | undefined
  let failures = 0

  const report = (error: unknown) => onError?.(error)

  const stop = () => {
    stopped = true
    if (retry !== undefined) clearTimeout(retry)
    retry = undefined
    source?.close()
  }

  function connect() {
    retry = undefined
    if (stopped) return
    const url = feedUrl(transport, filters, last)
    const EventSource = transport.EventSource()
    const current = new EventSource(url, { withCredentials: true })
    source = current
    current.addEventListener("open", () => {
      failures = 0
    })
    current.addEventListener("entry", (event) => {
      if (stopped || source !== current) return
      const decoded = decodeEntry(String(event.data))
      if (Result.isFailure(decoded)) {
        report(new ResponseShapeError("SSE", url, String(decoded.failure)))
        return
      }
      last = decoded.success.cursor
      onEntry(decoded.success)
    })
    current.addEventListener("end", (event) => {
      if (stopped || source !== current) return
      const decoded = decodeEnd(String(event.data))
      if (Result.isSuccess(decoded) && finalEnds.has(decoded.success.reason)) {
        stop()
        onEnd?.(decoded.success.reason)
      }
    })
    current.addEventListener("error", () => {
      if (stopped || source !== current || current.readyState !== CLOSED) return
      report(new Error(`the feed stream ${url} was refused`))
      failures++
      retry = setTimeout(connect, reconnectDelay(failures, (random ?? Math.random)(), delays))
    })
  }

  connect()
  return { close: stop }
}
