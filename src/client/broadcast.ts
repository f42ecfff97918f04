import { openEventStream } from "./eventStream"
import type { BackoffOptions } from "./reconnectBackoff"
import { defaultBackoff } from "./reconnectBackoff"
import type { StreamEventData } from "./streamEvents"
import { streamHandlers } from "./streamEvents"
import type { TabSharing } from "./tabLeader"
import { browserTabSharing, openTabShared } from "./tabLeader"
import type { Transport } from "./transport"
import type { PresenceIntervals, StreamEventName } from "./wire"

/**
 * The presence intervals a client uses until a stream's first `resync`
 * served the real ones: a heartbeat twice as often as the service's
 * default (one too many costs a request; one too few lets an editor lapse).
 */
export const fallbackPresenceIntervals: PresenceIntervals = { heartbeatMs: 5_000, lapseMs: 30_000 }

export interface BroadcastOptions {
  /**
   * The client's own reconnect delays (`reconnectDelay`), used when the
   * server refused the stream (not a 401) or after `errorsBeforeBackoff`
   * errors in a row without an open: doubling from `baseMs` up to `maxMs`,
   * each drawn in the upper half. Default 2 000 and 60 000. A stream that
   * dropped after opening is reopened by EventSource itself, after the
   * server's `retry:`.
   */
  readonly backoff?: Partial<BackoffOptions>
  /** The draw of the back-off's jitter, uniform in [0, 1). Default `Math.random`. */
  readonly random?: () => number
  /**
   * A datum that does not decode, or a handler that threw. Default:
   * rethrown in a microtask, so it is reported as an uncaught error and the
   * other handlers still run.
   */
  readonly onError?: (error: unknown) => void
}

export interface SharedBroadcastOptions extends BroadcastOptions {
  /**
   * The browser's Web Locks and BroadcastChannel. Default: the global ones;
   * `false`, or a browser without either: a stream of this tab's own.
   */
  readonly sharing?: TabSharing | false
}

export interface BroadcastStream {
  /**
   * Calls `handler` with the decoded data of every event `name` (docs/broadcast.md,
   * "The stream contract"): `changed` and `presence` hints; `resync` (hints may
   * have been missed: re-read what is shown); `end`; `shutdown`. Returns the
   * function that removes it.
   */
  on<K extends StreamEventName>(name: K, handler: (data: StreamEventData[K]) => void): () => void
  /**
   * Calls `handler` once when the session turned out to be gone (the stream's
   * open was refused and `/api/auth/session` names no one, or it ended for a
   * sign-out and then the same). The stream has stopped for good: show the sign-in page,
   * and open a new one after signing in.
   */
  onSignedOut(handler: () => void): () => void
  /** Ends the stream; handlers are dropped. */
  close(): void
}

export interface BroadcastClient {
  /**
   * Opens `GET /api/broadcast` as this tab's own EventSource with the
   * session cookie (`withCredentials: true`). A hint only means "refetch":
   * it is never stored nor replayed.
   */
  readonly open: (options?: BroadcastOptions) => BroadcastStream
  /**
   * The stream of `workspace` shared by every tab of this origin: one tab
   * (the leader, elected with the Web Lock of the workspace) holds the
   * EventSource and relays its events to the others over a BroadcastChannel;
   * when it closes, the next tab takes over. Where the browser has no Web
   * Locks or BroadcastChannel, the same as `open`.
   */
  readonly openShared: (workspace: string, options?: SharedBroadcastOptions) => BroadcastStream
  /** The presence intervals of the latest `resync` any stream of this client got; until then `fallbackPresenceIntervals`. */
  readonly presenceIntervals: () => PresenceIntervals
}

const rethrow = (error: unknown) =>
  queueMicrotask(() => {
    throw error
  })

export const broadcastClient = (transport: Transport): BroadcastClient => {
  let served: PresenceIntervals | undefined
  const intervals = {
    get: () => served,
    set: (presence: PresenceIntervals) => {
      served = presence
    }
  }

  const start = (
    options: BroadcastOptions,
    connect: (settings: {
      readonly handlers: ReturnType<typeof streamHandlers>
      readonly backoff: BackoffOptions
      readonly random: () => number
    }) => { readonly close: () => void }
  ): BroadcastStream => {
    const handlers = streamHandlers(transport.url("/api/broadcast"), options.onError ?? rethrow)
    handlers.on("resync", ({ presence }) => intervals.set(presence))
    const connection = connect({
      handlers,
      backoff: { ...defaultBackoff, ...options.backoff },
      random: options.random ?? Math.random
    })
    let closed = false
    return {
      on: (name, handler) => handlers.on(name, handler),
      onSignedOut: (handler) => handlers.onSignedOut(handler),
      close: () => {
        if (closed) return
        closed = true
        connection.close()
        handlers.clear()
      }
    }
  }

  return {
    open: (options = {}) => start(options, (settings) => openEventStream(transport, settings)),
    openShared: (workspace, options = {}) => {
      const sharing = options.sharing === false ? undefined : (options.sharing ?? browserTabSharing())
      return start(options, (settings) =>
        sharing === undefined
          ? openEventStream(transport, settings)
          : openTabShared(transport, workspace, sharing, { ...settings, intervals })
      )
    },
    presenceIntervals: () => served ?? fallbackPresenceIntervals
  }
}
