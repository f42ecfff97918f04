import { expect, it } from "@effect/vitest"
import { Effect, Fiber, Queue } from "effect"
import type { ServerResponse } from "node:http"
import { createServer } from "node:http"
import { connect } from "node:net"
import { drainHttpServer } from "../../src/http/HttpDrain"
import { eventually } from "../broadcast/streamHelpers"

/** A raw keep-alive connection: what it has received so far, and how it ended (if it did). */
const rawConnection = (port: number) =>
  Effect.acquireRelease(
    Effect.gen(function* () {
      const received = yield* Queue.unbounded<string>()
      const socket = connect(port, "127.0.0.1")
      const state = { text: "", ended: undefined as string | undefined }
      socket.on("data", (chunk) => {
        state.text += chunk.toString("latin1")
        Queue.offerUnsafe(received, state.text)
      })
      socket.on("error", (error) => (state.ended ??= `error: ${error.message}`))
      socket.on("close", () => {
        state.ended ??= "closed"
        Queue.offerUnsafe(received, state.text)
      })
      const ask = (path: string) => socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`)
      /** Waits until what it received holds `pattern` `count` times, or it ended. */
      const until = (pattern: RegExp, count = 1) =>
        Effect.gen(function* () {
          let seen = state.text
          while ((seen.match(pattern) ?? []).length < count && state.ended === undefined)
            seen = yield* Queue.take(received)
          return seen
        })
      return { socket, state, ask, until }
    }),
    (connection) => Effect.sync(() => connection.socket.destroy())
  )

it.live(
  "another response ending during the drain leaves the idle keep-alive connections open for their grace",
  () =>
    Effect.gen(function* () {
      let streaming: ServerResponse | undefined
      const server = createServer((request, response) => {
        if (request.url === "/stream") {
          response.writeHead(200, { "content-type": "text/plain" })
          response.write("started\n")
          streaming = response
        } else response.end("ok")
      })
      // A long grace: what this test holds is that nothing closes an idle connection before it ends.
      const drain = drainHttpServer(server, 60_000)
      yield* Effect.callback<void>((resume) => {
        server.listen(0, "127.0.0.1", () => resume(Effect.void))
      })
      yield* Effect.addFinalizer(() => Effect.sync(() => server.closeAllConnections()))
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0

      // A: a response under way when the drain begins (its headers out). B: idle after one answer.
      const a = yield* rawConnection(port)
      a.ask("/stream")
      yield* a.until(/started/)
      const b = yield* rawConnection(port)
      b.ask("/")
      yield* b.until(/\r\n\r\nok/)
      expect(b.state.text.toLowerCase()).not.toContain("connection: close")

      const draining = yield* Effect.forkChild(drain)
      yield* eventually(
        "the server stops listening",
        Effect.sync(() => !server.listening)
      )
      // A's response ends; B's client, not knowing of the drain, sends its next request on B.
      streaming?.end("done\n")
      yield* a.until(/done\n\r\n0\r\n\r\n/)
      b.ask("/")
      yield* b.until(/\r\n\r\nok/, 2)
      expect(b.state.ended ?? "open").not.toMatch(/^error/)
      expect((b.state.text.match(/HTTP\/1\.1 200/g) ?? []).length).toBe(2)
      expect(b.state.text.slice(b.state.text.lastIndexOf("HTTP/1.1 200")).toLowerCase()).toContain("connection: close")

      // B closes after its answer; A's client leaves: no connection is left, and the drain completes.
      a.socket.end()
      yield* Fiber.join(draining)
    }).pipe(Effect.scoped),
  30_000
)
