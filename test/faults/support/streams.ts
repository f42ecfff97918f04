import * as Sse from "effect/encoding/Sse"
import { Effect, Fiber, Ref } from "effect"
import type { Recorder } from "./recorder"

/** One event as a stream client received it. */
export interface ReceivedEvent {
  readonly event: string
  readonly at: number
  /** Which connection of the client (0 = the first open) carried it. */
  readonly connection: number
}

/** One open of a stream: when, its status (undefined: no answer), when and how it ended (undefined: still open). */
export interface Connection {
  readonly openedAt: number
  status: number | undefined
  endedAt: number | undefined
  endedBy: string | undefined
}

/** A browser-like SSE client: it reopens the stream when it ends, as EventSource does. */
export interface StreamClient {
  readonly index: number
  readonly events: Array<ReceivedEvent>
  readonly connections: Array<Connection>
}

export interface StreamClients {
  readonly clients: ReadonlyArray<StreamClient>
  /** Stops reopening and drops every open connection. */
  readonly close: Effect.Effect<void>
}

/**
 * Opens `count` streams on `GET /api/broadcast`, spread over the given
 * session cookies. A stream that ends or fails is reopened after 250 ms
 * (a bounded loop that stops at `close`). With `reopen: false` an ended
 * stream stays closed (to watch a shutdown end it).
 */
export const openStreams = (
  recorder: Recorder,
  base: string,
  cookies: ReadonlyArray<string>,
  count: number,
  options: { readonly reopen: boolean } = { reopen: true }
) =>
  Effect.gen(function* () {
    const closed = yield* Ref.make(false)
    const controllers = new Set<AbortController>()
    const clients: Array<StreamClient> = Array.from({ length: count }, (_, index) => ({
      index,
      events: [],
      connections: []
    }))

    const connect = (client: StreamClient, cookie: string) =>
      Effect.promise(async () => {
        const controller = new AbortController()
        controllers.add(controller)
        const connection: Connection = {
          openedAt: recorder.now(),
          status: undefined,
          endedAt: undefined,
          endedBy: undefined
        }
        const number = client.connections.length
        client.connections.push(connection)
        try {
          const response = await fetch(`${base}/api/broadcast`, {
            headers: { cookie, accept: "text/event-stream" },
            signal: controller.signal
          })
          connection.status = response.status
          if (!response.ok || response.body === null) {
            await response.arrayBuffer().catch(() => undefined)
            connection.endedBy = `status ${response.status}`
            return
          }
          const parser = Sse.makeParser((event) => {
            if (event._tag === "Event")
              client.events.push({ event: event.event, at: recorder.now(), connection: number })
          })
          const decoder = new TextDecoder()
          const reader = response.body.getReader()
          for (;;) {
            const { done, value } = await reader.read()
            if (done) {
              connection.endedBy = "server ended the stream"
              return
            }
            parser.feed(decoder.decode(value, { stream: true }))
          }
        } catch (error) {
          connection.endedBy = controller.signal.aborted
            ? "closed by the test"
            : `error: ${error instanceof Error ? error.message : String(error)}`
        } finally {
          connection.endedAt = recorder.now()
          controllers.delete(controller)
        }
      })

    const loop = (client: StreamClient, cookie: string) =>
      Effect.gen(function* () {
        while (!(yield* Ref.get(closed))) {
          yield* connect(client, cookie)
          if (!options.reopen) return
          yield* Effect.sleep("250 millis")
        }
      })

    const fibers = yield* Effect.forEach(clients, (client) =>
      Effect.forkChild(loop(client, cookies[client.index % cookies.length] ?? ""))
    )
    return {
      clients,
      close: Effect.gen(function* () {
        yield* Ref.set(closed, true)
        for (const controller of controllers) controller.abort()
        yield* Fiber.interruptAll(fibers)
      })
    } satisfies StreamClients
  })

/** Waits (bounded) until every client has an open 200 connection. */
export const allOpen = (streams: StreamClients) =>
  streams.clients.every((c) => {
    const last = c.connections[c.connections.length - 1]
    return last !== undefined && last.status === 200 && last.endedAt === undefined
  })
