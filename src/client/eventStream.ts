import type { ApiError } from "./errors"
import type { BackoffOptions } from "./reconnectBackoff"
import { reconnectDelay } from "./reconnectBackoff"
import type { StreamHandlers } from "./streamEvents"
import { streamEventNames } from "./streamEvents"
import type { Transport } from "./transport"
import type { StreamEndReason, StreamEventName } from "./wire"

/** Errors in a row without the stream opening, after which the client stops the EventSource's own retries and backs off. */
export const errorsBeforeBackoff = 3

/** The ends after which the session may be gone: the client asks at once rather than after the reconnect's 401. */
const sessionEnds: ReadonlySet<StreamEndReason> = new Set([
  "signed-out",
  "session-expired",
  "membership-changed",
  "workspace-removed"
])

const CLOSED = 2

export interface EventStreamOptions {
  readonly handlers: StreamHandlers
  readonly backoff: BackoffOptions
  readonly random: () => number
  /** Every event as it came (name and `data` line), after the handlers saw it: the tab leader's relay. */
  readonly relay?: (name: StreamEventName, raw: string) => void
  /** The session is gone (401): the stream has stopped for good. */
  readonly onSignedOut?: () => void
}

const isUnauthorized = (error: unknown): error is ApiError =>
  typeof error === "object" && error !== null && "status" in error && error.status === 401

/**
 * One `GET /api/broadcast` held open by an EventSource of this tab. The
 * EventSource reconnects by itself after a drop (after the server's
 * `retry:`); on top of that:
 *
 * - refused for good (the EventSource gave up on a non-200 answer): the
 *   session is asked for (`GET /api/auth/session`, which answers 200 either
 *   way, so a sign-out logs no 401 in the console); no one signed in stops
 *   everything (signed out), anything else reopens after `reconnectDelay`;
 * - `errorsBeforeBackoff` errors in a row without an open (the service is
 *   unreachable): the EventSource is stopped and reopened after
 *   `reconnectDelay`, which grows with each failure in a row;
 * - `end` for a reason that may have taken the session: the session is
 *   asked for at once.
 */
export const openEventStream = (transport: Transport, options: EventStreamOptions): { readonly close: () => void } => {
  const url = transport.url("/api/broadcast")
  const { handlers } = options
  let source: { close(): void } | undefined
  let stopped = false
  let retry: ReturnType<typeof setTimeout> | undefined
  let errorsInRow = 0
  let failures = 0

  const stop = () => {
    stopped = true
    if (retry !== undefined) clearTimeout(retry)
    retry = undefined
    source?.close()
  }

  const signedOut = () => {
    if (stopped) return
    stop()
    handlers.signedOut()
    options.onSignedOut?.()
  }

  const reopenLater = () => {
    if (stopped || retry !== undefined) return
    failures++
    retry = setTimeout(connect, reconnectDelay(failures, options.random(), options.backoff))
  }

  /** Resolves true when no one is signed in. A failure (a network fault, a 503) is not a sign-out. */
  const sessionGone = () =>
    transport
      .call((api) => api.auth.session())
      .then(
        (session) => session.me === null,
        (error: unknown) => isUnauthorized(error)
      )

  function connect() {
    retry = undefined
    if (stopped) return
    const EventSource = transport.EventSource()
    const current = new EventSource(url, { withCredentials: true })
    source = current
    for (const name of streamEventNames) {
      current.addEventListener(name, (event) => {
        if (stopped || source !== current) return
        const raw = String(event.data)
        handlers.emit(name, raw)
        options.relay?.(name, raw)
      })
    }
    current.addEventListener("open", () => {
      errorsInRow = 0
      failures = 0
    })
    current.addEventListener("error", () => {
      if (stopped || source !== current) return
      errorsInRow++
      if (current.readyState === CLOSED) {
        void sessionGone().then((gone) => (gone ? signedOut() : reopenLater()))
      } else if (errorsInRow >= errorsBeforeBackoff) {
        current.close()
        reopenLater()
      }
    })
  }

  handlers.on("end", ({ reason }) => {
    if (sessionEnds.has(reason)) void sessionGone().then((gone) => gone && signedOut())
  })
  connect()
  return { close: stop }
}
