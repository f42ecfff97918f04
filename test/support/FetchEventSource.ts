import * as Sse from "effect/encoding/Sse"
import type { EventSourceConstructor, EventSourceLike } from "../../src/client"
import { EventListeners } from "./EventListeners"

export interface TestEventSource extends EventSourceLike {
  readonly url: string
  /** Settles when the server answered: true with a stream (200), false otherwise. */
  readonly opened: Promise<boolean>
}

/**
 * An EventSource for Node 20 (which has none), over `fetchFn` (so it sends
 * the session cookie of a `browserFetch`): reads the body as it streams and
 * parses it with @effect/experimental's SSE parser. Unlike a browser's it
 * never reconnects: a refused or ended stream is CLOSED with an `error`
 * event. Each instance made is in `instances`.
 */
export const fetchEventSource = (fetchFn: typeof fetch) => {
  const instances: Array<TestEventSource> = []

  class FetchEventSource extends EventListeners implements TestEventSource {
    readyState = 0
    readonly opened: Promise<boolean>
    private readonly controller = new AbortController()

    constructor(readonly url: string) {
      super()
      instances.push(this)
      this.opened = this.run()
    }

    close(): void {
      this.readyState = 2
      this.controller.abort()
    }

    private fail() {
      if (this.readyState === 2) return
      this.readyState = 2
      this.dispatch("error")
    }

    private async run(): Promise<boolean> {
      let response: Response
      try {
        response = await fetchFn(this.url, { headers: { accept: "text/event-stream" }, signal: this.controller.signal })
      } catch {
        this.fail()
        return false
      }
      const body = response.body
      if (!response.ok || body === null) {
        await response.text().catch(() => "")
        this.fail()
        return false
      }
      this.readyState = 1
      this.dispatch("open")
      void this.pump(body)
      return true
    }

    private async pump(body: ReadableStream<Uint8Array>) {
      const parser = Sse.makeParser((event) => {
        if (event._tag === "Event" && this.readyState === 1) this.dispatch(event.event, event.data)
      })
      const reader = body.getReader()
      const decoder = new TextDecoder()
      try {
        for (;;) {
          const { done, value } = await reader.read()
          if (done) break
          parser.feed(decoder.decode(value, { stream: true }))
        }
      } catch {
        // aborted by close()
      }
      this.fail()
    }
  }

  const eventSource: EventSourceConstructor = FetchEventSource
  return { EventSource: eventSource, instances }
}
