import { Duration, Effect, Schedule } from "effect"
import type { SseEvent, SseStream } from "../support/sse"

/** The `changed` hint a stream should show for one record: the SSE event name and its exact data. */
export const changed = (businessObject: string, businessObjectId: string): SseEvent => ({
  event: "changed",
  data: { businessObject, businessObjectId }
})

/**
 * The first event of every stream: `resync`, reason `open`, with the presence
 * intervals of the default `PRESENCE_HEARTBEAT_MS` (10 s; lapse after 3).
 */
export const opened: SseEvent = {
  event: "resync",
  data: { reason: "open", presence: { heartbeatMs: 10_000, lapseMs: 30_000 } }
}

/** The `resync` every open stream gets when its instance has its pub/sub subscription back. */
export const resubscribed: SseEvent = {
  event: "resync",
  data: { reason: "resubscribed", presence: { heartbeatMs: 10_000, lapseMs: 30_000 } }
}

/** Whether `event` is the `resync` of a regained subscription. */
export const isResubscribed = (event: SseEvent) =>
  event.event === "resync" &&
  typeof event.data === "object" &&
  event.data !== null &&
  "reason" in event.data &&
  event.data.reason === "resubscribed"

/** The last event of a stream the server ended on purpose. */
export const ended = (reason: string): SseEvent => ({ event: "end", data: { reason } })

/** The record id a hint names, if it names one. */
export const hintId = (event: SseEvent): string | undefined => {
  const data = event.data
  return typeof data === "object" &&
    data !== null &&
    "businessObjectId" in data &&
    typeof data.businessObjectId === "string"
    ? data.businessObjectId
    : undefined
}

/** Waits (bounded) until the stream has received a hint about record `id`; returns everything received so far. */
export const awaitHint = (stream: SseStream, id: string, timeout: Duration.Input = "10 seconds") =>
  stream.waitFor((events) => events.some((event) => hintId(event) === id), timeout)

/** Polls `check` until it holds, failing the test when it does not within `timeout`. No fixed sleeps. */
export const eventually = <E, R>(
  what: string,
  check: Effect.Effect<boolean, E, R>,
  timeout: Duration.Input = "10 seconds"
) =>
  Effect.repeat(check, { until: (holds) => holds, schedule: Schedule.spaced("25 millis") }).pipe(
    Effect.timeoutOrElse({
      duration: timeout,
      orElse: () => Effect.fail(new Error(`${what}: not within ${Duration.format(Duration.fromInputUnsafe(timeout))}`))
    }),
    Effect.orDie,
    Effect.asVoid
  )

export interface Probe {
  readonly status: number
  readonly contentType: string
  /** Parsed JSON (or text) for an ordinary answer; undefined for an event stream, which is not read. */
  readonly body: unknown
  /** From sending the request until the status line arrived. */
  readonly millis: number
}

/**
 * A GET that never hangs on a long-lived answer: an event stream is dropped as
 * soon as its headers arrive, any other body is read and parsed. The whole
 * exchange is bounded by `timeoutMillis` (a defect past it).
 */
export const probe = (url: string, headers: Record<string, string> = {}, timeoutMillis = 5_000) =>
  Effect.tryPromise(async (): Promise<Probe> => {
    const controller = new AbortController()
    const timer = setTimeout(() => controller.abort(), timeoutMillis)
    const started = performance.now()
    try {
      const response = await fetch(url, { headers, signal: controller.signal })
      const millis = performance.now() - started
      const contentType = response.headers.get("content-type") ?? ""
      if (contentType.startsWith("text/event-stream")) {
        controller.abort()
        return { status: response.status, contentType, body: undefined, millis }
      }
      const text = await response.text()
      let body: unknown = text
      try {
        body = text.length > 0 ? JSON.parse(text) : undefined
      } catch {
        // not JSON: keep the text
      }
      return { status: response.status, contentType, body, millis }
    } finally {
      clearTimeout(timer)
    }
  }).pipe(Effect.orDie)
