import type { ServerResponse } from "node:http"
import type { Socket } from "node:net"
import { Duration, Effect, Schedule } from "effect"
import { AppConfig } from "../config/AppConfig"
import type { PubSubUnavailable } from "../api/errors"
import { apiPolicy, commonHeaders } from "./SecurityHeaders"
import { GracefulShutdown } from "../shutdown/GracefulShutdown"
import type { Detach } from "../broadcast/BroadcastHub"
import * as BroadcastHub from "../broadcast/BroadcastHub"
import { SseWriter } from "../broadcast/SseWriter"

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
 * after it.
 */
const head = (security: string) =>
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
  )

/**
 * The last event of every stream when the instance shuts down: the tab
 * reconnects (EventSource does so by itself when the connection closes),
 * after a `retry` spread over 1-3 s so that the tabs of a stopping instance do
 * not all arrive at the others at once.
 */
export const shutdownEvent = () =>
  Buffer.from(`retry: ${1_000 + Math.floor(Math.random() * 2_000)}\nevent: shutdown\ndata: {}\n\n`)

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
 * one `SseWriter` in the hub and one entry here; it ends when the socket
 * closes. (Left to the HTTP server, every open stream would keep its request
 * fiber, with the contexts and continuations of the whole middleware stack,
 * alive: about 40 KiB each.) ONE timer for all streams writes the keep-alive comment
 * (`BROADCAST_KEEPALIVE_MS`). When the instance drains (shutdown) every stream
 * gets `shutdownEvent` and is closed, so that the server can stop and the
 * tabs reconnect elsewhere; a stream whose client does not take it by the
 * drain's deadline, or still open when the layer closes, is dropped.
 */
export class SseStreams extends Effect.Service<SseStreams>()("SseStreams", {
  scoped: Effect.gen(function* () {
    const config = yield* AppConfig
    const security = Object.entries({ ...commonHeaders(config.hstsMaxAge), "content-security-policy": apiPolicy })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("")
    const shutdown = yield* GracefulShutdown
    const open = Array.from({ length: slices }, () => new Set<SseWriter>())
    /** Each session's open streams on this instance, oldest first (a Set keeps insertion order). */
    const bySession = new Map<string, Set<SseWriter>>()
    let joined = 0
    let tick = 0
    let draining = false
    /** Resumes the drain once the last stream has closed. */
    let onLastClosed: (() => void) | undefined
    const openCount = () => open.reduce((sum, slice) => sum + slice.size, 0)

    yield* Effect.sync(() => {
      const slice = open[tick++ % slices]
      if (slice !== undefined) for (const writer of slice) writer.keepAlive(keepAliveComment)
    }).pipe(Effect.repeat(Schedule.fixed(Duration.unsafeDivide(config.broadcastKeepAlive, slices))), Effect.forkScoped)

    yield* Effect.addFinalizer(() =>
      Effect.sync(() => {
        for (const slice of open) for (const writer of slice) writer.destroy()
      })
    )

    /**
     * Counts the stream against its session's cap; past the cap the session's
     * OLDEST stream on this instance is dropped (its tab reconnects by itself;
     * a zombie whose socket died unnoticed goes too). Returns the release.
     */
    const enrol = (session: string, writer: SseWriter) => {
      let streams = bySession.get(session)
      if (streams === undefined) {
        streams = new Set()
        bySession.set(session, streams)
      }
      streams.add(writer)
      for (const oldest of streams) {
        if (streams.size <= config.maxStreamsPerSession) break
        streams.delete(oldest)
        oldest.destroy()
      }
      const mine = streams
      return () => {
        mine.delete(writer)
        if (mine.size === 0 && bySession.get(session) === mine) bySession.delete(session)
      }
    }
    yield* shutdown.onDrain(
      "broadcast streams",
      Effect.async<void>((resume) => {
        if (openCount() === 0) return resume(Effect.void)
        onLastClosed = () => resume(Effect.void)
        // The deadline: drop whatever has not closed yet.
        return Effect.sync(() => {
          for (const slice of open) for (const writer of slice) writer.destroy()
        })
      }),
      {
        // Before the HTTP server closes: it counts a stream's socket, detached from its response, as idle.
        announce: Effect.sync(() => {
          draining = true
          for (const slice of open) for (const writer of slice) writer.end(shutdownEvent())
        })
      }
    )

    /** From here on the stream belongs to its socket: this closure must not hold the request. */
    const adopt = (socket: Socket, writer: SseWriter, detach: Detach, session: string) => {
      const slice = open[joined++ % slices] ?? new Set<SseWriter>()
      slice.add(writer)
      const release = enrol(session, writer)
      socket.once("close", () => {
        detach()
        slice.delete(writer)
        release()
        writer.close()
        if (draining && openCount() === 0) onLastClosed?.()
      })
    }

    /**
     * Starts the stream of `response`: `attach` hands the writer to the hub
     * (it may fail, 503, before anything is written); then the socket is
     * detached from the response, the head goes out, and the stream lives
     * until the socket closes. Nothing happens when the client is gone already.
     * `session` names whose stream it is, for the cap per session.
     */
    const start = (
      response: ServerResponse,
      session: string,
      attach: (writer: SseWriter) => Effect.Effect<Detach, PubSubUnavailable>
    ): Effect.Effect<void, PubSubUnavailable> =>
      Effect.gen(function* () {
        const socket = response.socket
        if (socket === null || socket.destroyed) return
        const writer = new SseWriter(socket, BroadcastHub.defaultCapacity)
        const detach = yield* attach(writer)
        if (socket.destroyed) return detach()
        adopt(socket, writer, detach, session)
        // What the server writes for this response from now on goes nowhere.
        response.detachSocket(socket)
        writer.start(head(security))
        // Opened on a connection that was already open when the drain began.
        if (draining) writer.end(shutdownEvent())
      })

    return { start } as const
  })
}) {}
