import { FetchHttpClient, HttpClient } from "effect/http"
import { Cause, Effect, Exit, Option } from "effect"
import { makeApiClient } from "./apiClient"
import type { ApiClient } from "./apiClient"
import { rejectionOf } from "./rejection"
import type { SentRequest } from "./rejection"
import type { RetryOptions } from "./retry"
import { trackingCommitPositions } from "./commitPosition"
import { sendingFetch } from "./sendingFetch"

/** The part of the browser's `EventSource` the client uses; the global `EventSource` is one. */
export interface EventSourceLike {
  readonly readyState: number
  addEventListener(type: string, listener: (event: MessageEvent) => void): void
  removeEventListener(type: string, listener: (event: MessageEvent) => void): void
  close(): void
}

export type EventSourceConstructor = new (url: string, init?: { withCredentials?: boolean }) => EventSourceLike

export interface ClientOptions {
  /** Origin (and path prefix) of the service, e.g. `https://crm.example.com`; default "" (the page's own origin). */
  readonly baseUrl?: string
  /** Default: the global `fetch`, looked up at call time. */
  readonly fetch?: typeof fetch
  /** Default: the global `EventSource`, looked up when a stream opens (Node 20 has none: pass one). */
  readonly EventSource?: EventSourceConstructor
  /** Retrying of writes (each sent with an `Idempotency-Key`) on a network fault or a 503; default 3 attempts. */
  readonly retry?: RetryOptions
}

export interface CallOptions {
  /** `fetch(..., { keepalive: true })`: delivered even while the page unloads. */
  readonly keepalive?: boolean
  /** Sees the 2xx answer (its headers: an `ETag`) before its body is decoded. */
  readonly onResponse?: (response: Response) => void
}

/** How every call reaches the service. */
export interface Transport {
  /** The URL of a path on the service (the broadcast stream's, which an EventSource opens). */
  readonly url: (path: string) => string
  readonly EventSource: () => EventSourceConstructor
  /**
   * Runs one call of the contract's client as a Promise, with the session
   * cookie (`credentials: "include"`). It rejects with an `ApiError` (a
   * non-2xx answer), a `ResponseShapeError` (a 2xx answer the route does not
   * declare), `fetch`'s own error (a network fault), or what `request`
   * threw (a bad argument).
   */
  readonly call: <A, E>(request: (api: ApiClient) => Effect.Effect<A, E>, options?: CallOptions) => Promise<A>
}

export const makeTransport = (options: ClientOptions = {}): Transport => {
  const base = (options.baseUrl ?? "").replace(/\/+$/, "")
  const api = makeApiClient(base)
  // Looked up per call, never as `window.fetch` detached from `window` (an "Illegal invocation").
  const rawFetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))
  // Each attempt of a retried write sends the highest commit position too, and every answer's is kept.
  const send = sendingFetch(trackingCommitPositions(base, rawFetch), options.retry)

  return {
    url: (path) => `${base}${path}`,
    EventSource: () => {
      const eventSource = options.EventSource ?? globalThis.EventSource
      if (eventSource === undefined) throw new TypeError("no EventSource: pass one to createClient({ EventSource })")
      return eventSource
    },
    call: async (request, callOptions = {}) => {
      let sent: SentRequest | undefined
      const fetchOnce: typeof fetch = async (input, init) => {
        sent = { method: init?.method ?? "GET", url: String(input) }
        const response = await send(input, init)
        callOptions.onResponse?.(response)
        return response
      }
      const exit = await Effect.runPromiseExit(
        Effect.suspend(() => request(api)).pipe(
          Effect.provideService(FetchHttpClient.Fetch, fetchOnce),
          // No trace headers: a `traceparent` would make every cross-origin call preflighted, for nothing.
          Effect.provideService(HttpClient.TracerPropagationEnabled, false),
          Effect.provideService(FetchHttpClient.RequestInit, {
            credentials: "include",
            ...(callOptions.keepalive === true ? { keepalive: true } : {})
          })
        )
      )
      if (Exit.isSuccess(exit)) return exit.value
      throw Cause.findErrorOption(exit.cause).pipe(
        Option.match({ onNone: () => Cause.squash(exit.cause), onSome: (error) => rejectionOf(error, sent) })
      )
    }
  }
}
