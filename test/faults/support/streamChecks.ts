import { expect } from "@effect/vitest"
import { Effect, Schedule } from "effect"
import type { Duration } from "effect"
import { ended } from "../../broadcast/streamHelpers"
import type { SseEvent, SseStream } from "../../support/sse"
import type { Sent } from "./viaProxy"

/** The `presence` hint of one record. */
export const presenceEvent = (businessObject: string, id: string): SseEvent => ({
  event: "presence",
  data: { businessObject, businessObjectId: id }
})
const sameEvent = (a: SseEvent, b: SseEvent) => a.event === b.event && JSON.stringify(a.data) === JSON.stringify(b.data)
/** Every one of `streams` receives `event`, each within 10 s; a stream that does not is named with its instance. */
export const has = (streams: ReadonlyArray<Sent<SseStream>>, event: SseEvent) =>
  Effect.forEach(
    streams,
    (s) =>
      s.value
        .waitFor((events) => events.some((e) => sameEvent(e, event)), "30 seconds")
        .pipe(
          Effect.timeoutOrElse({
            duration: "10 seconds",
            orElse: () =>
              Effect.die(new Error(`the stream on instance ${s.instance} got no ${JSON.stringify(event)} within 10 s`))
          })
        ),
    { concurrency: "unbounded", discard: true }
  )
/** Every one of `streams` is ended by the server, its last event `end` with `reason`. */
export const endedWith = (streams: ReadonlyArray<Sent<SseStream>>, reason: string) =>
  Effect.forEach(
    streams,
    (s) =>
      Effect.gen(function* () {
        yield* s.value.ended
        expect((yield* s.value.events).at(-1)).toEqual(ended(reason))
      }),
    { concurrency: "unbounded", discard: true }
  )
/** Repeats `check` (spaced) until `done` holds for its value; fails the test past `timeout`. */
export const until = <A, E>(
  what: string,
  check: Effect.Effect<A, E>,
  done: (value: A) => boolean,
  timeout: Duration.Input
) =>
  Effect.repeat(check, { until: done, schedule: Schedule.spaced("100 millis") }).pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => Effect.die(new Error(`${what}: not within ${String(timeout)}`))
    })
  )
