import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { subscribe, unsubscribe } from "node:diagnostics_channel"
import { createServer, request as httpRequest, IncomingMessage } from "node:http"
import { Readable } from "node:stream"
import { readBody } from "../../src/http/BodyReader"
import { chunked, rawExchange, repeatedBytes, requestHead } from "../support/rawHttp"
import { baseUrl, TestApp } from "../support/TestApp"

/**
 * A refused body must not stay in memory after the refusal (BENCHMARKS.md,
 * "Limits"): the chunks the reader took are freed at once, not whenever a
 * garbage collection happens to come. A freed chunk reads as empty.
 */

const kib = 1024

/** `count` chunks of `size` bytes, each in an ArrayBuffer of its own, as Node's HTTP parser hands them over. */
const ownChunks = (count: number, size: number) =>
  Array.from({ length: count }, (_, index) => Buffer.alloc(size, 0x61 + (index % 26)))

/** A readable that holds `chunks` and hands them out in order. */
const sourceOf = (chunks: ReadonlyArray<Buffer>) => {
  const source = new Readable({ read() {} })
  for (const chunk of chunks) source.push(chunk)
  source.push(null)
  return source
}

const sizes = (chunks: ReadonlyArray<Buffer>) => chunks.map((chunk) => chunk.byteLength)

describe("reading a body (src/http/BodyReader.ts)", () => {
  it.effect("a body over the limit: refused one chunk past the limit, and every chunk it read is freed", () =>
    Effect.gen(function* () {
      const chunks = ownChunks(32, 64 * kib)
      const exit = yield* Effect.exit(readBody(sourceOf(chunks), 256 * kib))
      expect(exit).toEqual(Exit.fail(expect.objectContaining({ _tag: "BodyTooLarge" })))
      // Five chunks taken (the fifth passes 256 KiB) and freed; the rest never read.
      expect(sizes(chunks)).toEqual([...Array(5).fill(0), ...Array(27).fill(64 * kib)])
    })
  )

  it.effect("a body within the limit: its bytes are returned whole, and the chunks they were copied from freed", () =>
    Effect.gen(function* () {
      const chunks = ownChunks(4, 16 * kib)
      const expected = Buffer.concat(chunks)
      const body = yield* readBody(sourceOf(chunks), 64 * kib)
      expect(Buffer.from(body).equals(expected)).toBe(true)
      expect(sizes(chunks)).toEqual([0, 0, 0, 0])
    })
  )

  it.effect("chunks another listener also received, or views into a shared buffer, are left alone", () =>
    Effect.gen(function* () {
      const shared = ownChunks(8, 64 * kib)
      const other = sourceOf(shared)
      other.on("data", () => {})
      yield* Effect.exit(readBody(other, 128 * kib))
      expect(sizes(shared)).toEqual(Array(8).fill(64 * kib))

      // Small buffers from Node's pool share one ArrayBuffer with other buffers.
      const pooled = [Buffer.from("x".repeat(100)), Buffer.from("y".repeat(100))]
      yield* Effect.exit(readBody(sourceOf(pooled), 150))
      expect(pooled.map((chunk) => chunk.toString())).toEqual(["x".repeat(100), "y".repeat(100)])
    })
  )

  it.effect(
    "over a real connection: what a refused chunked body leaves in memory is only what the socket still queues",
    () =>
      Effect.gen(function* () {
        const limit = 256 * kib
        const observed = yield* Effect.promise(
          () =>
            new Promise<{ pushed: Array<number>; held: Array<number>; queued: number; status: string }>((resolve) => {
              const server = createServer((request: IncomingMessage, response) => {
                // What Node's parser hands the request, seen without becoming one more `data` listener.
                const pushed: Array<Buffer> = []
                const pushedSizes: Array<number> = []
                const push = request.push.bind(request)
                request.push = (chunk: unknown, encoding?: BufferEncoding) => {
                  if (Buffer.isBuffer(chunk)) {
                    pushed.push(chunk)
                    pushedSizes.push(chunk.byteLength)
                  }
                  return push(chunk, encoding)
                }
                void Effect.runPromise(Effect.exit(readBody(request, limit))).then((exit) => {
                  const held = sizes(pushed).filter((size) => size > 0)
                  resolve({
                    pushed: pushedSizes,
                    held,
                    queued: request.readableLength,
                    status: Exit.isFailure(exit) ? "refused" : "read"
                  })
                  response.writeHead(413, { connection: "close" }).end()
                })
              })
              server.listen(0, "127.0.0.1", () => {
                const address = server.address()
                const port = typeof address === "object" && address !== null ? address.port : 0
                const client = httpRequest({
                  host: "127.0.0.1",
                  port,
                  method: "POST",
                  headers: { "transfer-encoding": "chunked" }
                })
                const close = () => {
                  client.destroy()
                  server.closeAllConnections()
                  server.close()
                }
                client.on("response", close)
                client.on("error", close)
                const body = Readable.from(ownChunks(256, 16 * kib))
                body.on("error", () => {})
                body.pipe(client).on("error", () => {})
              })
            })
        )
        expect(observed.status).toBe("refused")
        // Read up to the limit and one chunk more...
        const read = observed.pushed.reduce((sum, size) => sum + size, 0) - observed.queued
        expect(read).toBeGreaterThan(limit)
        expect(read).toBeLessThanOrEqual(limit + 64 * kib)
        // ...and of all that, only the chunks still queued in the paused request are held.
        expect(observed.held.reduce((sum, size) => sum + size, 0)).toBe(observed.queued)
      })
  )
})

/** The Node request a `node:http` diagnostics message is about. */
const requestOf = (message: unknown) =>
  typeof message === "object" && message !== null && "request" in message && message.request instanceof IncomingMessage
    ? message.request
    : undefined

interface Watched {
  readonly path: string
  /** Every body chunk Node's parser handed the request, and its size then. */
  readonly pushed: Array<{ readonly chunk: Buffer; readonly size: number }>
  /** When the answer was sent: body bytes received so far, bytes of them still in memory, bytes queued unread. */
  finished?: { readonly received: number; readonly held: number; readonly queued: number }
}

/**
 * The body chunks of every request that carries `x-watch-body`, as the
 * service's Node server receives them (`node:http` diagnostics channels; the
 * chunks are seen where the parser pushes them, not as a `data` listener).
 */
const watchBodies = Effect.acquireRelease(
  Effect.sync(() => {
    const watched = new Map<IncomingMessage, Watched>()
    const onStart = (message: unknown) => {
      const request = requestOf(message)
      if (request === undefined || request.headers["x-watch-body"] === undefined) return
      const entry: Watched = { path: request.url ?? "", pushed: [] }
      watched.set(request, entry)
      const push = request.push.bind(request)
      request.push = (chunk: unknown, encoding?: BufferEncoding) => {
        if (Buffer.isBuffer(chunk)) entry.pushed.push({ chunk, size: chunk.byteLength })
        return push(chunk, encoding)
      }
    }
    const onFinish = (message: unknown) => {
      const request = requestOf(message)
      const entry = request === undefined ? undefined : watched.get(request)
      if (request === undefined || entry === undefined) return
      const received = entry.pushed.reduce((sum, { size }) => sum + size, 0)
      const held = entry.pushed.reduce((sum, { chunk }) => sum + chunk.byteLength, 0)
      entry.finished = { received, held, queued: request.readableLength }
    }
    subscribe("http.server.request.start", onStart)
    subscribe("http.server.response.finish", onFinish)
    return {
      watched,
      stop: () => {
        unsubscribe("http.server.request.start", onStart)
        unsubscribe("http.server.response.finish", onFinish)
      }
    }
  }),
  ({ stop }) => Effect.sync(stop)
)

layer(TestApp, { excludeTestServices: true })("a refused body in the service", (it) => {
  it.effect("once a chunked body over the limit is answered 413, none of the bytes read is held any more", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const { watched } = yield* watchBodies
      const id = "00000000-0000-4000-8000-000000000001"
      const routes = [
        { method: "POST", path: "/api/auth/login", limit: 16 * kib },
        { method: "POST", path: "/api/records/crm/company", limit: 1024 * kib },
        { method: "PATCH", path: `/api/records/crm/company/${id}`, limit: 1024 * kib },
        // A route that takes no body reads one up to the limit and drops it.
        { method: "PUT", path: `/api/presence/crm/company/${id}/tab-1`, limit: 1024 * kib }
      ]
      for (const { method, path } of routes) {
        const head = requestHead(method, base, path, {
          "content-type": "application/json",
          "transfer-encoding": "chunked",
          origin: base,
          "x-watch-body": "1"
        })
        const answer = yield* rawExchange(base, head, chunked(repeatedBytes(64 * kib, 64)))
        expect(answer.status, path).toBe(413)
      }
      const entries = [...watched.values()]
      expect(entries.map((entry) => entry.path)).toEqual(routes.map((route) => route.path))
      for (const [index, entry] of entries.entries()) {
        const limit = routes[index]?.limit ?? 0
        const finished = entry.finished
        expect(finished, entry.path).toBeDefined()
        const read = (finished?.received ?? 0) - (finished?.queued ?? 0)
        expect(read, entry.path).toBeGreaterThan(limit)
        expect(read, entry.path).toBeLessThanOrEqual(limit + 64 * kib)
        // Only what the paused request still queues (freed with the connection) is in memory.
        expect(finished?.held, entry.path).toBe(finished?.queued)
      }
    })
  )
})
