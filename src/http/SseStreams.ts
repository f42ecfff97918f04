import type { ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { Duration, Effect, Exit, Queue, Schedule } from "effect"
import type { StreamEndReason } from "../api/Broadcast"
import { AppConfig } from "../config/AppConfig"
import { apiPolicy, commonHeaders } from "./SecurityHeaders"
import { GracefulShutdown } from "../shutdown/GracefulShutdown"
import { BroadcastBus } from "../broadcast/BroadcastBus"
import type { Detach } from "../broadcast/BroadcastHub"
import * as BroadcastHub from "../broadcast/BroadcastHub"
import { SseWriter } from "../broadcast/SseWriter"
import type { QueuedEvent } from "../broadcast/SseWriter"
import { endEvent, resyncEvent, shutdownEvent } from "../broadcast/streamEvents"
import { lifetimeMs, retryDelayMs } from "../broadcast/streamTiming"
import type { StreamRevocation } from "../broadcast/StreamRevocation"
import { presenceIntervals } from "../presence/Presence"

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
const head = (security: string, first: Uint8Array) =>
  Buffer.concat([
    Buffer.from(
      "HTTP/1.1 200 OK\r\n" +
        "Content-Type: text/event-stream\r\n" +
        "Cache-Control: no-cache\r\n" +
        "X-Accel-Buffering: no\r\n" +
        "Connection: close\r\n" +
        security +
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

/** Whose stream it is: for the cap per session and for revocations. */
export interface StreamOwner {
  /** The session's token hash. */
  readonly session: string
  readonly userId: string
  readonly workspaceId: string
}

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
export class SseStreams extends Effect.Service<SseStreams>()("SseStreams", {
  scoped: Effect.gen(function* () {
    const config = yield* AppConfig
    const bus = yield* BroadcastBus
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
    /** Each session's streams on this instance, oldest first (a Set keeps insertion order). */
    const bySession = new Map<string, Set<SseWriter>>()
    /** Each user's streams on this instance, with the workspace each belongs to. */
    const byUser = new Map<string, Map<SseWriter, string>>()
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
    }).pipe(Effect.repeat(Schedule.fixed(Duration.unsafeDivide(config.broadcastKeepAlive, slices))), Effect.forkScoped)

    yield* Effect.addFinalizer(() => Effect.sync(() => everyOpen((writer) => writer.destroy())))

    // The subscription is back after an outage: every open stream may have missed hints.
    const resubscriptions = yield* bus.resubscriptions
    yield* Queue.take(resubscriptions).pipe(
      Effect.zipRight(Effect.sync(() => everyOpen((writer) => writer.offer(resubscribed)))),
      Effect.forever,
      Effect.forkScoped
    )

    /** Ends the streams a revocation names, whatever their state (one not yet started just closes). */
    const revoke = (revocation: StreamRevocation) => {
      const last = endEvent(revocation.reason)
      if (revocation._tag === "Session") {
        for (const writer of [...(bySession.get(revocation.tokenHash) ?? [])]) writer.end(last)
        return
      }
      for (const userId of revocation.userIds) {
        for (const [writer, workspaceId] of [...(byUser.get(userId) ?? [])]) {
          if (revocation.workspaceId === null || revocation.workspaceId === workspaceId) writer.end(last)
        }
      }
    }
    const revocations = yield* bus.revocations
    yield* Queue.take(revocations).pipe(
      Effect.flatMap((revocation) => Effect.sync(() => revoke(revocation))),
      Effect.forever,
      Effect.forkScoped
    )

    /**
     * Makes the stream reachable by revocations and counts it against its
     * session's cap; past the cap the session's OLDEST stream on this instance
     * is dropped (its tab reconnects by itself; a zombie whose socket died
     * unnoticed goes too). Returns the release.
     */
    const register = (owner: StreamOwner, writer: SseWriter) => {
      let streams = bySession.get(owner.session)
      if (streams === undefined) {
        streams = new Set()
        bySession.set(owner.session, streams)
      }
      streams.add(writer)
      for (const oldest of streams) {
        if (streams.size <= config.maxStreamsPerSession) break
        streams.delete(oldest)
        oldest.destroy()
      }
      let users = byUser.get(owner.userId)
      if (users === undefined) {
        users = new Map()
        byUser.set(owner.userId, users)
      }
      users.set(writer, owner.workspaceId)
      const sessionStreams = streams
      const userStreams = users
      return () => {
        sessionStreams.delete(writer)
        if (sessionStreams.size === 0 && bySession.get(owner.session) === sessionStreams)
          bySession.delete(owner.session)
        userStreams.delete(writer)
        if (userStreams.size === 0 && byUser.get(owner.userId) === userStreams) byUser.delete(owner.userId)
      }
    }

    yield* shutdown.onDrain(
      "broadcast streams",
      Effect.async<void>((resume) => {
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
      const deadline = deadlineOf(sessionEndsAt)
      const timer = setTimeout(() => writer.end(endEvent(deadline.reason)), deadline.ms)
      // The stream must not keep the process alive by itself.
      timer.unref()
      socket.once("close", () => {
        clearTimeout(timer)
        detach()
        slice.delete(writer)
        release()
        writer.close()
        if (draining && openCount() === 0) onLastClosed?.()
      })
    }

    /**
     * Starts the stream of `response`. It is registered first, so that a
     * revocation published from then on reaches it; then `open` (which may
     * fail, 401 or 503, before anything is written) reads what the stream may
     * see, checks the session and attaches the writer to the hub. A change
     * that commits before `open` reads is thus seen by it, and one after it
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
        const release = register(owner, writer)
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
        writer.start(head(security, resyncEvent("open", presence, retryMs)))
        // Opened on a connection that was already open when the drain began.
        if (draining) writer.end(lastAtShutdown())
      })

    return { start } as const
  })
}) {}
