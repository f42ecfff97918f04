import type { ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { Context, Duration, Effect, Exit, Layer, Option, PubSub, Schedule } from "effect"
import type { StreamEndReason } from "../api/Broadcast"
import { AppConfig } from "../config/AppConfig"
import { currentRequestId } from "./RequestId"
import { apiPolicy, commonHeaders } from "./SecurityHeaders"
import { GracefulShutdown } from "../shutdown/GracefulShutdown"
import { BroadcastBus } from "../broadcast/BroadcastBus"
import type { Detach } from "../broadcast/BroadcastHub"
import * as BroadcastHub from "../broadcast/BroadcastHub"
import { SseWriter } from "../broadcast/SseWriter"
import type { QueuedEvent } from "../broadcast/SseWriter"
import { endEvent, resyncEvent, shutdownEvent } from "../broadcast/streamEvents"
import { lifetimeMs, retryDelayMs } from "../broadcast/streamTiming"
import { StreamIndex } from "../broadcast/StreamIndex"
import type { StreamOwner } from "../broadcast/StreamIndex"
import { presenceIntervals } from "../presence/Presence"
import { broadcastStreamsOpen } from "../metrics/ServiceMetrics"

/**
 * The open streams are split into this many slices, and the one keep-alive
 * timer visits one slice per tick: every stream still gets its comment once
 * per interval, but 10,000 streams never take one long burst of writes.
 */
const slices = 16

const keepAliveComment = Buffer.from(": keep-alive\n\n")

/**
 * The response is written on the socket itself (see `start`), so it is
 * framed by closing the connection: no chunked encoding, nothing to reuse
 * after it. The stream's first event (`resync`, with its `retry:`) goes out
 * with the headers, before any hint.
 */
const head = (security: string, requestId: Option.Option<string>, first: Uint8Array) =>
  Buffer.concat([
    Buffer.from(
      "HTTP/1.1 200 OK\r\n" +
        "Content-Type: text/event-stream\r\n" +
        "Cache-Control: no-cache\r\n" +
        "X-Accel-Buffering: no\r\n" +
        "Connection: close\r\n" +
        security +
        // Checked to be visible ASCII (`requestIdFrom`): it cannot break the head.
        Option.match(requestId, { onNone: () => "", onSome: (id) => `X-Request-Id: ${id}\r\n` }) +
        `Date: ${new Date().toUTCString()}\r\n` +
        "\r\n" +
        // Written at once, with the headers.
        ": connected\n\n"
    ),
    first
  ])

/**
 * The last event of every stream when the instance shuts down: the tab
 * reconnects (EventSource does so by itself when the connection closes),
 * after a `retry` spread over 1-3 s so that the tabs of a stopping instance do
 * not all arrive at the others at once.
 */
const lastAtShutdown = () => shutdownEvent(retryDelayMs(1_000, 3_000, Math.random()))

/** What opening a registered stream gave: its place in the hub, and when its session ends (epoch ms). */
export interface OpenedStream {
  readonly detach: Detach
  readonly sessionEndsAt: number
}

/** The headers of the stream, for a HEAD request (answered through the HTTP server as usual). */
export const streamHeaders = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  "x-accel-buffering": "no"
} as const

/**
 * The broadcast streams open on this instance.
 *
 * `start` takes the socket of a request over from the HTTP server: the
 * request's fiber ends at once, and what is left of a stream is its socket,
 * one `SseWriter` in the hub, its entries here and its lifetime timer; it ends
 * when the socket closes. (Left to the HTTP server, every open stream would
 * keep its request fiber, with the contexts and continuations of the whole
 * middleware stack, alive: about 40 KiB each.) ONE timer for all streams
 * writes the keep-alive comment (`BROADCAST_KEEPALIVE_MS`).
 *
 * Every stream opens with `resync` (and its `retry:`, drawn per stream) and
 * gets another when the instance regains its pub/sub subscription. It ends
 * with `end` and a reason at its lifetime (or its session's end, if sooner)
 * and when a revocation from any instance names its session or its user.
 * When the instance drains (shutdown) every stream gets `shutdown` and is
 * closed, so that the server can stop and the tabs reconnect elsewhere; a
 * stream whose client does not take it by the drain's deadline, or still open
 * when the layer closes, is dropped.
 */
export class SseStreams extends Context.Service<SseStreams>()("SseStreams", {
  make: Effect.gen(function* () {
    const config = yield* AppConfig
    const bus = yield* BroadcastBus
    // The gauge is moved from socket callbacks, outside any fiber: with this layer's context (its registry).
    const metricContext = yield* Effect.context<never>()
    const security = Object.entries({ ...commonHeaders(config.hstsMaxAge), "content-security-policy": apiPolicy })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("")
    const shutdown = yield* GracefulShutdown
    const presence = presenceIntervals(config.presenceHeartbeat)
    const retryRange = [Duration.toMillis(config.streamRetry.min), Duration.toMillis(config.streamRetry.max)] as const
    const maxLifetimeMs = Duration.toMillis(config.streamMaxLifetime)
    /** One waiting `resync` is as good as two: the key lets a backed-up stream hold one. */
    const resubscribed: QueuedEvent = { key: "resync", event: resyncEvent("resubscribed", presence) }
    const open = Array.from({ length: slices }, () => new Set<SseWriter>())
    /** By session (the cap per session) and by user, for revocations. */
    const index = new StreamIndex<SseWriter>(config.maxStreamsPerSession)
    let joined = 0
    let tick = 0
    let draining = false
    /** Resumes the drain once the last stream has closed. */
    let onLastClosed: (() => void) | undefined
    const openCount = () => open.reduce((sum, slice) => sum + slice.size, 0)
    const everyOpen = (f: (writer: SseWriter) => void) => {
      for (const slice of open) for (const writer of slice) f(writer)
    }

    yield* Effect.sync(() => {
      const slice = open[tick++ % slices]
      if (slice !== undefined) for (const writer of slice) writer.keepAlive(keepAliveComment)
    }).pipe(Effect.repeat(Schedule.fixed(Duration.divideUnsafe(config.broadcastKeepAlive, slices))), Effect.forkScoped)

    yield* Effect.addFinalizer(() => Effect.sync(() => everyOpen((writer) => writer.destroy())))

    // The subscription is back after an outage: every open stream may have missed hints.
    const resubscriptions = yield* bus.resubscriptions
    yield* PubSub.take(resubscriptions).pipe(
      Effect.andThen(Effect.sync(() => everyOpen((writer) => writer.offer(resubscribed)))),
      Effect.forever,
      Effect.forkScoped
    )

    // A revocation from any instance: end the streams it names, whatever their state (one not yet started just closes).
    const revocations = yield* bus.revocations
    yield* PubSub.take(revocations).pipe(
      Effect.flatMap((revocation) =>
        Effect.sync(() => {
          const last = endEvent(revocation.reason)
          for (const writer of index.named(revocation)) writer.end(last)
        })
      ),
      Effect.forever,
      Effect.forkScoped
    )

    yield* shutdown.onDrain(
      "broadcast streams",
      Effect.callback<void>((resume) => {
        if (openCount() === 0) return resume(Effect.void)
        onLastClosed = () => resume(Effect.void)
        // The deadline: drop whatever has not closed yet.
        return Effect.sync(() => everyOpen((writer) => writer.destroy()))
      }),
      {
        // Before the HTTP server closes: it counts a stream's socket, detached from its response, as idle.
        announce: Effect.sync(() => {
          draining = true
          everyOpen((writer) => writer.end(lastAtShutdown()))
        })
      }
    )

    /** The stream's end: its lifetime (±10%, drawn per stream), or its session's end when that comes first. */
    const deadlineOf = (sessionEndsAt: number): { readonly ms: number; readonly reason: StreamEndReason } => {
      const lifetime = lifetimeMs(maxLifetimeMs, Math.random())
      const sessionLeft = Math.max(0, sessionEndsAt - Date.now())
      return sessionLeft < lifetime
        ? { ms: sessionLeft, reason: "session-expired" }
        : { ms: lifetime, reason: "lifetime" }
    }

    /** From here on the stream belongs to its socket: this closure must not hold the request. */
    const adopt = (socket: Socket, writer: SseWriter, detach: Detach, release: () => void, sessionEndsAt: number) => {
      const slice = open[joined++ % slices] ?? new Set<SseWriter>()
      slice.add(writer)
      broadcastStreamsOpen.modifyUnsafe(1, metricContext)
      const deadline = deadlineOf(sessionEndsAt)
      const timer = setTimeout(() => writer.end(endEvent(deadline.reason)), deadline.ms)
      // The stream must not keep the process alive by itself.
      timer.unref()
      socket.once("close", () => {
        clearTimeout(timer)
        detach()
        slice.delete(writer)
        broadcastStreamsOpen.modifyUnsafe(-1, metricContext)
        release()
        writer.close()
        if (draining && openCount() === 0) onLastClosed?.()
      })
    }

    /**
     * Starts the stream of `response`. It is registered first, so that a
     * revocation published from then on reaches it; then `openStream` (which may
     * fail, 401 or 503, before anything is written) reads what the stream may
     * see, checks the session and attaches the writer to the hub. A change
     * that commits before `openStream` reads is thus seen by it, and one after it
     * ends the stream. Then the socket is detached from the response, the head
     * and the first `resync` go out, and the stream lives until the socket
     * closes. Nothing happens when the client is gone already.
     */
    const start = <E, R>(
      response: ServerResponse,
      owner: StreamOwner,
      openStream: (writer: SseWriter) => Effect.Effect<OpenedStream, E, R>
    ): Effect.Effect<void, E, R> =>
      Effect.gen(function* () {
        const socket = response.socket
        if (socket === null || socket.destroyed) return
        const writer = new SseWriter(socket, BroadcastHub.defaultCapacity)
        // Reachable by revocations from here on; past the session's cap its oldest stream goes.
        const release = index.register(owner, writer)
        const opened = yield* openStream(writer).pipe(
          Effect.onExit((exit) => (Exit.isSuccess(exit) ? Effect.void : Effect.sync(release)))
        )
        // Gone meanwhile: the client left, the cap evicted it, or a revocation ended it.
        if (socket.destroyed) {
          opened.detach()
          return release()
        }
        adopt(socket, writer, opened.detach, release, opened.sessionEndsAt)
        // What the server writes for this response from now on goes nowhere.
        response.detachSocket(socket)
        const retryMs = retryDelayMs(retryRange[0], retryRange[1], Math.random())
        writer.start(head(security, yield* currentRequestId, resyncEvent("open", presence, retryMs)))
        // Opened on a connection that was already open when the drain began.
        if (draining) writer.end(lastAtShutdown())
      })

    return { start } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
