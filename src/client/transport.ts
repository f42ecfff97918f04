import { Either, ParseResult, Schema } from "effect"
import { apiErrorOf, ResponseShapeError } from "./errors"
import { randomId } from "./randomId"
import { defaultAttempts, defaultMaxDelayMs, retryDelayMs, sleep } from "./retry"
import type { RetryOptions } from "./retry"

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

export type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE"

export interface RequestInit {
  /** Already in wire form; sent as JSON. */
  readonly body?: unknown
  /** `fetch(..., { keepalive: true })`: delivered even while the page unloads. */
  readonly keepalive?: boolean
  /**
   * A write made safe to repeat: sent with a new `Idempotency-Key`, and sent
   * again with the same key when `fetch` rejects (network fault) or the
   * answer is a 503, after its `Retry-After`. Never on any other error.
   */
  readonly idempotent?: boolean
}

/** How every call reaches the service: JSON over `fetch` with the session cookie, responses decoded. */
export interface Transport {
  readonly url: (path: string) => string
  readonly EventSource: () => EventSourceConstructor
  /** A call whose 2xx body is decoded with `schema` (a mismatch is a ResponseShapeError). */
  readonly json: <A, I>(schema: Schema.Schema<A, I>, method: Method, path: string, init?: RequestInit) => Promise<A>
  /** A call answered with no content (204). */
  readonly send: (method: Method, path: string, init?: RequestInit) => Promise<void>
}

export const makeTransport = (options: ClientOptions = {}): Transport => {
  const base = (options.baseUrl ?? "").replace(/\/+$/, "")
  const url = (path: string) => `${base}${path}`
  // Looked up per call, never as `window.fetch` detached from `window` (an "Illegal invocation").
  const fetchFn: typeof fetch = options.fetch ?? ((input, init) => globalThis.fetch(input, init))

  const attempts = Math.max(1, Math.floor(options.retry?.attempts ?? defaultAttempts))
  const maxDelayMs = options.retry?.maxDelayMs ?? defaultMaxDelayMs

  const call = async (method: Method, path: string, init: RequestInit): Promise<Response> => {
    const headers: Record<string, string> = { accept: "application/json" }
    if (init.body !== undefined) headers["content-type"] = "application/json"
    // randomId, not crypto.randomUUID: that one is missing on pages served over plain HTTP.
    if (init.idempotent === true) headers["idempotency-key"] = randomId()
    const request: globalThis.RequestInit = {
      method,
      headers,
      credentials: "include",
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      ...(init.keepalive === true ? { keepalive: true } : {})
    }
    const tries = init.idempotent === true ? attempts : 1
    for (let attempt = 1; ; attempt++) {
      let response: Response
      try {
        response = await fetchFn(url(path), request)
      } catch (fault) {
        if (attempt >= tries) throw fault
        await sleep(retryDelayMs(null, attempt, maxDelayMs))
        continue
      }
      if (response.status === 503 && attempt < tries) {
        await response.text().catch(() => "")
        await sleep(retryDelayMs(response.headers.get("retry-after"), attempt, maxDelayMs))
        continue
      }
      if (!response.ok) throw await apiErrorOf(response)
      return response
    }
  }

  return {
    url,
    EventSource: () => {
      const eventSource = options.EventSource ?? globalThis.EventSource
      if (eventSource === undefined) throw new TypeError("no EventSource: pass one to createClient({ EventSource })")
      return eventSource
    },
    json: async (schema, method, path, init = {}) => {
      const response = await call(method, path, init)
      const text = await response.text()
      let body: unknown
      try {
        body = JSON.parse(text)
      } catch {
        throw new ResponseShapeError(method, url(path), `not JSON: ${text.slice(0, 200)}`)
      }
      const decoded = Schema.decodeUnknownEither(schema)(body)
      if (Either.isLeft(decoded)) {
        throw new ResponseShapeError(method, url(path), ParseResult.TreeFormatter.formatErrorSync(decoded.left))
      }
      return decoded.right
    },
    send: async (method, path, init = {}) => {
      const response = await call(method, path, init)
      await response.text()
    }
  }
}
