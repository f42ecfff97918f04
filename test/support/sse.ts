import * as Sse from "effect/encoding/Sse"
import { Deferred, Effect, Ref } from "effect"
import type { Duration, Scope } from "effect"

export interface SseEvent {
  readonly event: string
  readonly data: unknown
}

/** An open SSE stream read by a real HTTP client, its events collected as they arrive. */
export interface SseStream {
  readonly status: number
  readonly headers: Headers
  /** Everything received so far (comments included, as raw text). */
  readonly raw: Effect.Effect<string>
  readonly events: Effect.Effect<ReadonlyArray<SseEvent>>
  /** When each of `events` arrived (`Date.now()`), in the same order. */
  readonly arrivedAt: Effect.Effect<ReadonlyArray<number>>
  /** Waits (up to `timeout`) until `predicate` holds for the events received so far. */
  readonly waitFor: (
    predicate: (events: ReadonlyArray<SseEvent>) => boolean,
    timeout?: Duration.Input
  ) => Effect.Effect<ReadonlyArray<SseEvent>>
  /** Drops the connection, as a closed tab does. */
  readonly close: Effect.Effect<void>
  /** Waits (up to 10 s) until the server has ended the stream. */
  readonly ended: Effect.Effect<void>
}

/**
 * Opens `url` with `fetch` and parses the body with @effect/experimental's
 * SSE parser. The connection is dropped when the scope closes. A non-2xx
 * answer is returned with its status and no events.
 */
export const openSse = (
  url: string,
  headers: Record<string, string> = {}
): Effect.Effect<SseStream, never, Scope.Scope> =>
  Effect.gen(function* () {
    const controller = new AbortController()
    yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
    const response = yield* Effect.promise(() => fetch(url, { headers, signal: controller.signal }))
    const events = yield* Ref.make<ReadonlyArray<SseEvent>>([])
    const arrivals: Array<number> = []
    const raw = yield* Ref.make("")
    const changed = yield* Ref.make(yield* Deferred.make<void>())
    const endedByServer = yield* Deferred.make<void>()
    // A fresh Deferred on every notification: one made once would stay completed
    // after the second chunk, and `waitFor` would then spin without yielding to I/O.
    const notify = Deferred.make<void>().pipe(
      Effect.flatMap((fresh) => Ref.getAndSet(changed, fresh)),
      Effect.flatMap((d) => Deferred.succeed(d, undefined))
    )
    const parser = Sse.makeParser((event) => {
      if (event._tag !== "Event") return
      let data: unknown = event.data
      try {
        data = JSON.parse(event.data)
      } catch {
        // not JSON: keep the text
      }
      arrivals.push(Date.now())
      Effect.runSync(Ref.update(events, (all) => [...all, { event: event.event, data }]))
    })
    const body = response.body
    if (response.ok && body) {
      const decoder = new TextDecoder()
      const reader = body.getReader()
      const pump = Effect.promise(async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) return Effect.runSync(Deferred.succeed(endedByServer, undefined))
            const text = decoder.decode(value, { stream: true })
            Effect.runSync(Ref.update(raw, (all) => all + text))
            parser.feed(text)
            Effect.runSync(notify)
          }
        } catch {
          // aborted: the test closed the stream
        }
      })
      yield* Effect.forkScoped(pump)
    } else {
      yield* Effect.promise(() => response.text())
    }

    const waitFor: SseStream["waitFor"] = (predicate, timeout = "10 seconds") =>
      Effect.gen(function* () {
        for (;;) {
          const signal = yield* Ref.get(changed)
          const all = yield* Ref.get(events)
          if (predicate(all)) return all
          yield* Deferred.await(signal)
        }
      }).pipe(
        Effect.timeoutOrElse({
          duration: timeout,
          orElse: () => Effect.fail(new Error(`SSE condition not met within ${String(timeout)}`))
        }),
        Effect.orDie
      )

    return {
      status: response.status,
      headers: response.headers,
      raw: Ref.get(raw),
      events: Ref.get(events),
      arrivedAt: Effect.sync(() => [...arrivals]),
      waitFor,
      close: Effect.sync(() => controller.abort()),
      ended: Deferred.await(endedByServer).pipe(
        Effect.timeoutOrElse({
          duration: "10 seconds",
          orElse: () => Effect.fail(new Error("the server did not end the SSE stream within 10 s"))
        }),
        Effect.orDie
      )
    }
  })
