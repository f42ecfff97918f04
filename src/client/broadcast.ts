import { Either, ParseResult, Schema } from "effect"
import { ResponseShapeError } from "./errors"
import type { EventSourceLike, Transport } from "./transport"
import type { BroadcastData, BroadcastType } from "./wire"
import { Broadcast } from "./wire"

export interface BroadcastOptions {
  /**
   * After the server refused or ended the stream for good (the browser's
   * EventSource gives up on a non-200 answer, e.g. a 503 while Redis is
   * down), open a new one after this many milliseconds, doubled after each
   * failure in a row up to a minute. Default 5 000. Dropped connections are
   * retried by EventSource itself.
   */
  readonly retryMs?: number
  /**
   * A hint whose data does not decode, or a handler that threw. Default:
   * rethrown in a microtask, so it is reported as an uncaught error and the
   * other handlers still run.
   */
  readonly onError?: (error: unknown) => void
}

export interface BroadcastStream {
  /** Calls `handler` with the data of every hint of `type`; returns the function that removes it. */
  on(type: BroadcastType, handler: (data: BroadcastData) => void): () => void
  /**
   * Calls `handler` each time the stream is open again after a drop. Hints
   * sent meanwhile are lost (never replayed): refetch what is shown.
   */
  onReconnect(handler: () => void): () => void
  /** Ends the stream; handlers are dropped. */
  close(): void
}

export interface BroadcastClient {
  /**
   * Opens `GET /api/broadcast` as an EventSource with the session cookie
   * (`withCredentials: true`). A hint only means "refetch": it is never
   * stored nor replayed.
   */
  readonly open: (options?: BroadcastOptions) => BroadcastStream
}

const types: ReadonlyArray<BroadcastType> = ["changed", "presence"]
const CLOSED = 2
const maxRetryMs = 60_000

const rethrow = (error: unknown) =>
  queueMicrotask(() => {
    throw error
  })

export const broadcastClient = (transport: Transport): BroadcastClient => ({
  open: (options = {}) => {
    const url = transport.url("/api/broadcast")
    const retryMs = options.retryMs ?? 5_000
    const onError = options.onError ?? rethrow
    const handlers = new Map<BroadcastType, Set<(data: BroadcastData) => void>>(types.map((type) => [type, new Set()]))
    const reconnectHandlers = new Set<() => void>()
    let source: EventSourceLike | undefined
    let openedBefore = false
    let closed = false
    let retry: ReturnType<typeof setTimeout> | undefined
    let failures = 0

    const deliver = (type: BroadcastType) => (event: MessageEvent) => {
      let data: BroadcastData
      try {
        const raw: unknown = event.data
        const decoded = Schema.decodeUnknownEither(Broadcast)({ type, data: JSON.parse(String(raw)) })
        if (Either.isLeft(decoded))
          throw new ResponseShapeError("SSE", url, ParseResult.TreeFormatter.formatErrorSync(decoded.left))
        data = decoded.right.data
      } catch (error) {
        return onError(error instanceof ResponseShapeError ? error : new ResponseShapeError("SSE", url, String(error)))
      }
      for (const handler of [...(handlers.get(type) ?? [])]) {
        try {
          handler(data)
        } catch (error) {
          onError(error)
        }
      }
    }

    const connect = () => {
      retry = undefined
      const EventSource = transport.EventSource()
      const current = new EventSource(url, { withCredentials: true })
      source = current
      for (const type of types) current.addEventListener(type, deliver(type))
      current.addEventListener("open", () => {
        failures = 0
        if (openedBefore) for (const handler of [...reconnectHandlers]) handler()
        openedBefore = true
      })
      current.addEventListener("error", () => {
        if (closed || current.readyState !== CLOSED || retry !== undefined) return
        retry = setTimeout(connect, Math.min(retryMs * 2 ** failures, maxRetryMs))
        failures++
      })
    }

    connect()
    return {
      on: (type, handler) => {
        // A fresh function per call, so one handler added twice is removed once per remover.
        const entry = (data: BroadcastData) => handler(data)
        handlers.get(type)?.add(entry)
        return () => void handlers.get(type)?.delete(entry)
      },
      onReconnect: (handler) => {
        const entry = () => handler()
        reconnectHandlers.add(entry)
        return () => void reconnectHandlers.delete(entry)
      },
      close: () => {
        if (closed) return
        closed = true
        if (retry !== undefined) clearTimeout(retry)
        source?.close()
        for (const set of handlers.values()) set.clear()
        reconnectHandlers.clear()
      }
    }
  }
})
