import { Effect } from "effect"
import { connect } from "node:net"

/** What came back on a raw connection: the parsed answer (status 0 when none) and whether the server closed it. */
export interface RawAnswer {
  readonly status: number
  readonly head: string
  readonly body: string
  /** The server ended or reset the connection. */
  readonly closed: boolean
  /** Body bytes the client managed to hand to its socket before the server closed it. */
  readonly sent: number
}

/**
 * One exchange on a connection of its own, for what `fetch` cannot do: send
 * `head` (request line and headers, as given), then `body` chunk by chunk
 * (a generator: nothing large is built up front), honouring back-pressure,
 * until it is done or the server closes the connection; then wait for the
 * server to close it. Resolves with whatever the server answered.
 */
export const rawExchange = (base: string, head: string, body: Iterable<Uint8Array> = []) =>
  Effect.promise(
    () =>
      new Promise<RawAnswer>((resolve) => {
        const url = new URL(base)
        const socket = connect(Number(url.port), url.hostname)
        const received: Array<Buffer> = []
        let closed = false
        let sent = 0
        socket.on("data", (chunk: Buffer) => received.push(chunk))
        socket.on("error", () => {})
        socket.once("close", () => {
          closed = true
          const text = Buffer.concat(received).toString("utf8")
          const end = text.indexOf("\r\n\r\n")
          const headText = end < 0 ? text : text.slice(0, end)
          resolve({
            status: Number(/^HTTP\/1\.1 (\d{3})/.exec(headText)?.[1] ?? 0),
            head: headText,
            body: end < 0 ? "" : text.slice(end + 4),
            closed,
            sent
          })
        })
        const drainedOrClosed = () =>
          new Promise<void>((done) => {
            const finish = () => {
              socket.off("drain", finish)
              socket.off("close", finish)
              done()
            }
            socket.once("drain", finish)
            socket.once("close", finish)
          })
        socket.once("connect", async () => {
          socket.write(head)
          for (const chunk of body) {
            if (closed || socket.destroyed || socket.writableEnded) break
            sent += chunk.length
            if (!socket.write(chunk)) await drainedOrClosed()
          }
        })
      })
  )

/** `count` chunks of `size` bytes of `byte`, made one at a time. */
export function* repeatedBytes(size: number, count: number, byte = 0x61): Generator<Uint8Array> {
  const chunk = Buffer.alloc(size, byte)
  for (let i = 0; i < count; i++) yield chunk
}

/** The chunks of `inner` in HTTP/1.1 chunked framing, with the closing chunk. */
export function* chunked(inner: Iterable<Uint8Array>): Generator<Uint8Array> {
  for (const chunk of inner) {
    yield Buffer.from(`${chunk.length.toString(16)}\r\n`)
    yield chunk
    yield Buffer.from("\r\n")
  }
  yield Buffer.from("0\r\n\r\n")
}

/** A request head: request line, `Host`, the given headers, blank line. */
export const requestHead = (method: string, base: string, path: string, headers: Record<string, string>) =>
  `${method} ${path} HTTP/1.1\r\nHost: ${new URL(base).host}\r\n` +
  Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("") +
  "\r\n"
