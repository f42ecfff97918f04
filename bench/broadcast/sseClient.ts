/**
 * The load generator's SSE client: a plain TCP socket per stream, a GET
 * written by hand, the response head parsed once, then the body scanned for
 * events. `node:http` would add its parser, an IncomingMessage stream and a
 * string decoder to every chunk; at 50,000 events/s on the same two cores as
 * the service, that overhead would be measured as the service's latency.
 * Handles both body framings: chunked (`node:http` servers, bare.ts) and
 * delimited by the connection's close (the service's stream).
 */
import { connect } from "node:net"
import type { Socket } from "node:net"

export interface SseConnection {
  readonly socket: Socket
  /** Resolves with the status once the head and the first body bytes have arrived; rejects on a non-200 or an error. */
  readonly connected: Promise<number>
}

/** Chunked transfer coding, decoded incrementally: yields the payload bytes as text. */
class Dechunker {
  private buffer = ""
  /** Bytes left of the current chunk's payload; -1 while a size line is expected. */
  private left = -1

  feed(text: string, out: (payload: string) => void): void {
    this.buffer += text
    for (;;) {
      if (this.left < 0) {
        const eol = this.buffer.indexOf("\r\n")
        if (eol < 0) return
        this.left = Number.parseInt(this.buffer.slice(0, eol), 16)
        this.buffer = this.buffer.slice(eol + 2)
        if (Number.isNaN(this.left) || this.left === 0) return
      }
      if (this.buffer.length === 0) return
      const take = Math.min(this.left, this.buffer.length)
      out(this.buffer.slice(0, take))
      this.buffer = this.buffer.slice(take)
      this.left -= take
      if (this.left > 0) return
      // The CRLF after the payload.
      if (this.buffer.length < 2) return
      this.buffer = this.buffer.slice(2)
      this.left = -1
    }
  }
}

/**
 * Opens `GET path` with the given headers; `onBody` gets the body's text as
 * it arrives (latin1: the ids and names of the bench are ASCII), with the
 * time its chunk was read.
 */
export const openSse = (
  port: number,
  path: string,
  headers: Record<string, string>,
  onBody: (text: string) => void
): SseConnection => {
  const socket = connect({ host: "127.0.0.1", port, noDelay: true })
  socket.setEncoding("latin1")
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`)
  socket.write(`GET ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\n${lines.join("")}\r\n`)
  const connected = new Promise<number>((resolve, reject) => {
    let head = ""
    let body: ((text: string) => void) | undefined
    socket.on("data", (text: string) => {
      if (body !== undefined) return body(text)
      head += text
      const end = head.indexOf("\r\n\r\n")
      if (end < 0) return
      const status = Number(head.slice(9, 12))
      if (status !== 200) {
        reject(new Error(`GET ${path}: ${status}`))
        socket.destroy()
        return
      }
      const chunked = /\r\ntransfer-encoding:\s*chunked/i.test(head.slice(0, end))
      if (chunked) {
        const dechunker = new Dechunker()
        body = (more) => dechunker.feed(more, onBody)
      } else {
        body = onBody
      }
      const rest = head.slice(end + 4)
      head = ""
      if (rest.length > 0) {
        body(rest)
        resolve(status)
      } else {
        // The opening comment comes with the head or right after it.
        socket.once("data", () => resolve(status))
      }
    })
    socket.once("error", reject)
    socket.once("close", () => reject(new Error(`GET ${path}: closed before it answered`)))
  })
  connected.catch(() => undefined)
  return { socket, connected }
}
