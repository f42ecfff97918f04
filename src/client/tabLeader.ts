import { Result, Schema } from "effect"
import { openEventStream } from "./eventStream"
import type { BackoffOptions } from "./reconnectBackoff"
import type { StreamHandlers } from "./streamEvents"
import type { Transport } from "./transport"
import { PresenceIntervals, StreamEventName } from "./wire"

/** What the tabs of one workspace tell each other on their BroadcastChannel (never leaves the browser). */
const TabMessage = Schema.Union([
  /** The leader relays an event of its stream, as it came. */
  Schema.Struct({ kind: Schema.Literal("event"), name: StreamEventName, raw: Schema.String }),
  /** The leader's stream met a 401: every tab stops. */
  Schema.Struct({ kind: Schema.Literal("signed-out") }),
  /** A tab joined: the leader answers with the intervals it was served. */
  Schema.Struct({ kind: Schema.Literal("hello") }),
  Schema.Struct({ kind: Schema.Literal("intervals"), presence: PresenceIntervals })
])
type TabMessage = typeof TabMessage.Type
const decodeMessage = Schema.decodeUnknownResult(TabMessage)

/** The part of the browser's `navigator.locks` the tab leader uses. */
export interface TabLocks {
  request(name: string, options: { readonly signal: AbortSignal }, callback: () => Promise<void>): Promise<void>
}

/** What the tab leader needs of the browser; both are missing in old browsers and in jsdom. */
export interface TabSharing {
  readonly locks: TabLocks
  readonly BroadcastChannel: new (name: string) => BroadcastChannel
}

/** The browser's Web Locks and BroadcastChannel, when it has both. */
export const browserTabSharing = (): TabSharing | undefined => {
  const locks: LockManager | undefined = globalThis.navigator?.locks
  const Channel: (new (name: string) => BroadcastChannel) | undefined = globalThis.BroadcastChannel
  return locks === undefined || Channel === undefined ? undefined : { locks, BroadcastChannel: Channel }
}

/** The lock and channel name of a workspace's stream (per origin, as both are). */
export const tabLeaderName = (workspace: string) => `audit-broadcast:${workspace}`

export interface TabSharedOptions {
  readonly handlers: StreamHandlers
  readonly backoff: BackoffOptions
  readonly random: () => number
  readonly intervals: {
    readonly get: () => PresenceIntervals | undefined
    readonly set: (p: PresenceIntervals) => void
  }
}

/**
 * The workspace's stream, one per browser rather than one per tab: the tab
 * holding the Web Lock `tabLeaderName(workspace)` (the leader) holds the
 * EventSource and relays each event over the BroadcastChannel of the same
 * name; every other tab waits for the lock and hands what it receives to
 * its own handlers. The browser releases a lock when its tab goes away, so
 * the next tab in line takes over at once and opens the stream (whose
 * `resync` re-reads whatever was missed during the handover).
 */
export const openTabShared = (
  transport: Transport,
  workspace: string,
  sharing: TabSharing,
  options: TabSharedOptions
): { readonly close: () => void } => {
  const { handlers, intervals } = options
  const channel = new sharing.BroadcastChannel(tabLeaderName(workspace))
  const waiting = new AbortController()
  let leaderStream: { close(): void } | undefined
  let releaseLock: (() => void) | undefined
  let closed = false

  const post = (message: TabMessage) => {
    if (!closed) channel.postMessage(message)
  }

  const close = () => {
    if (closed) return
    closed = true
    waiting.abort()
    leaderStream?.close()
    releaseLock?.()
    channel.close()
  }

  const lead = () =>
    new Promise<void>((release) => {
      if (closed) return release()
      releaseLock = release
      leaderStream = openEventStream(transport, {
        handlers,
        backoff: options.backoff,
        random: options.random,
        relay: (name, raw) => post({ kind: "event", name, raw }),
        onSignedOut: () => {
          post({ kind: "signed-out" })
          close()
        }
      })
    })

  channel.onmessage = (event: MessageEvent) => {
    const decoded = decodeMessage(event.data)
    if (closed || Result.isFailure(decoded)) return
    const message = decoded.success
    // Heard by a tab that has just taken the lock over, too: the stream it opened would only meet the same 401.
    if (message.kind === "signed-out") {
      close()
      handlers.signedOut()
      return
    }
    if (leaderStream !== undefined) {
      const served = intervals.get()
      if (message.kind === "hello" && served !== undefined) post({ kind: "intervals", presence: served })
      return
    }
    switch (message.kind) {
      case "event":
        handlers.emit(message.name, message.raw)
        return
      case "intervals":
        intervals.set(message.presence)
        return
      case "hello":
        return
    }
  }

  sharing.locks.request(tabLeaderName(workspace), { signal: waiting.signal }, lead).catch(() => {
    // Aborted while waiting (closed before this tab led): nothing to undo. Refused (an opaque origin): a stream of its own.
    if (!closed) void lead()
  })
  post({ kind: "hello" })
  return { close }
}
