import type { EventSourceLike } from "../../../src/client"
import { EventListeners } from "../../support/EventListeners"

/** One request the client made, as `fetch` received it. */
export interface FetchCall {
  /** The whole URL, as given. */
  readonly url: string
  /** The URL's path and query, without the origin. */
  readonly path: string
  readonly method: string
  readonly init: RequestInit
  /** The parsed JSON body, if any. */
  readonly body: unknown
}

export const json = (status: number, body: unknown): Response =>
  new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })

export const noContent = (): Response => new Response(null, { status: 204 })

const bodyText = (body: RequestInit["body"]): string | undefined =>
  typeof body === "string" ? body : ArrayBuffer.isView(body) ? new TextDecoder().decode(body) : undefined

/**
 * A `fetch` at the browser boundary: records every call and answers with
 * `answer(call)`. The client under test is the real one.
 */
export const fakeFetch = (answer: (call: FetchCall) => Response | Promise<Response>) => {
  const calls: Array<FetchCall> = []
  const fetch: typeof globalThis.fetch = async (input, init = {}) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
    const parsed = new URL(url, "http://page.test")
    const text = bodyText(init.body)
    const call: FetchCall = {
      url,
      path: `${parsed.pathname}${parsed.search}`,
      method: init.method ?? "GET",
      init,
      body: text === undefined ? undefined : JSON.parse(text)
    }
    calls.push(call)
    return answer(call)
  }
  return { calls, fetch }
}

/**
 * The browser's EventSource, faked: the test opens it, emits hints, drops
 * it. Every instance made is kept in `FakeEventSource.instances`.
 */
export class FakeEventSource extends EventListeners implements EventSourceLike {
  static instances: Array<FakeEventSource> = []
  static reset() {
    FakeEventSource.instances = []
  }
  /** The instances not closed. */
  static get open(): ReadonlyArray<FakeEventSource> {
    return FakeEventSource.instances.filter((source) => source.readyState !== 2)
  }

  readyState = 0
  readonly withCredentials: boolean

  constructor(
    readonly url: string,
    init: { withCredentials?: boolean } = {}
  ) {
    super()
    this.withCredentials = init.withCredentials ?? false
    FakeEventSource.instances.push(this)
  }

  close(): void {
    this.readyState = 2
  }

  /** The server answered 200: the stream is open. */
  open(): void {
    this.readyState = 1
    this.dispatch("open")
  }

  /** A hint arrives: `event: <type>`, `data: <JSON of data>` (or raw text). */
  emit(type: string, data: unknown): void {
    if (this.readyState === 2) return
    this.dispatch(type, typeof data === "string" ? data : JSON.stringify(data))
  }

  /** The connection dropped: EventSource reconnects by itself (CONNECTING), or gives up for good (CLOSED, e.g. a 503). */
  drop(options: { readonly permanently?: boolean } = {}): void {
    this.readyState = options.permanently === true ? 2 : 0
    this.dispatch("error")
  }
}
