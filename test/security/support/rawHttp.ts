import * as net from "node:net"

/**
 * A request as bytes: what the fuzz sends is exactly what goes on the wire
 * (`node:http` would refuse or normalize much of it: raw bytes in the path,
 * odd header values, bodies that are not what their content type says).
 */
export interface RawRequest {
  readonly method: string
  /** The request target as sent, e.g. `/api/records/crm/deal?limit=x`. */
  readonly target: Buffer
  readonly headers: ReadonlyArray<readonly [string, Buffer]>
  readonly body: Buffer | undefined
}

export interface RawResponse {
  readonly status: number
  readonly headers: ReadonlyMap<string, string>
  readonly body: Buffer
  /** The answer was a stream (`text/event-stream`): the client hung up after its headers. */
  readonly streamed: boolean
}

/** How a request went wrong below HTTP: no answer at all. */
export type RawFailure =
  | { readonly _tag: "Hang"; readonly afterMs: number; readonly received: number }
  | { readonly _tag: "Dropped"; readonly code: string; readonly received: number }
  | { readonly _tag: "Unparseable"; readonly head: string }

export type RawOutcome = { readonly _tag: "Answered"; readonly response: RawResponse } | RawFailure

/** No test answer is bigger than the OpenAPI document or a built script; more means something runs away. */
const maxResponseBytes = 8 * 1024 * 1024

export const encodeRequest = (host: string, request: RawRequest): Buffer => {
  const lines: Array<Buffer> = [
    Buffer.from(`${request.method} `, "latin1"),
    request.target,
    Buffer.from(" HTTP/1.1\r\n", "latin1")
  ]
  lines.push(Buffer.from(`host: ${host}\r\nconnection: close\r\n`, "latin1"))
  for (const [name, value] of request.headers)
    lines.push(Buffer.from(`${name}: `, "latin1"), value, Buffer.from("\r\n", "latin1"))
  if (request.body !== undefined) lines.push(Buffer.from(`content-length: ${request.body.length}\r\n`, "latin1"))
  lines.push(Buffer.from("\r\n", "latin1"))
  if (request.body !== undefined) lines.push(request.body)
  return Buffer.concat(lines)
}

interface Head {
  readonly status: number
  readonly headers: Map<string, string>
  readonly bodyStart: number
}

const parseHead = (received: Buffer): Head | "incomplete" | "bad" => {
  // Interim answers (100 Continue to `expect: 100-continue`) precede the real one.
  let skipped = 0
  while (/^HTTP\/1\.[01] 1\d\d /.test(received.subarray(skipped, skipped + 16).toString("latin1"))) {
    const interimEnd = received.indexOf("\r\n\r\n", skipped, "latin1")
    if (interimEnd < 0) return "incomplete"
    skipped = interimEnd + 4
  }
  const bytes = received.subarray(skipped)
  const end = bytes.indexOf("\r\n\r\n", 0, "latin1")
  if (end < 0) return bytes.length > 64 * 1024 ? "bad" : "incomplete"
  const [statusLine = "", ...lines] = bytes.subarray(0, end).toString("latin1").split("\r\n")
  const match = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)
  if (match === null) return "bad"
  const headers = new Map<string, string>()
  for (const line of lines) {
    const colon = line.indexOf(":")
    if (colon <= 0) return "bad"
    const name = line.slice(0, colon).trim().toLowerCase()
    const value = line.slice(colon + 1).trim()
    // Repeated headers (set-cookie) are joined; the fuzz only reads them as text.
    headers.set(name, headers.has(name) ? `${headers.get(name)}, ${value}` : value)
  }
  return { status: Number(match[1]), headers, bodyStart: skipped + end + 4 }
}

/** A chunked body, decoded; "incomplete" until its last chunk has arrived. */
const dechunk = (bytes: Buffer): Buffer | "incomplete" | "bad" => {
  const parts: Array<Buffer> = []
  let at = 0
  for (;;) {
    const lineEnd = bytes.indexOf("\r\n", at, "latin1")
    if (lineEnd < 0) return "incomplete"
    const size = Number.parseInt(bytes.subarray(at, lineEnd).toString("latin1").split(";")[0] ?? "", 16)
    if (!Number.isFinite(size)) return "bad"
    if (size === 0) return Buffer.concat(parts)
    if (bytes.length < lineEnd + 2 + size + 2) return "incomplete"
    parts.push(bytes.subarray(lineEnd + 2, lineEnd + 2 + size))
    at = lineEnd + 2 + size + 2
  }
}

/** The body once all of it is there, by `content-length`, chunks, or the connection's end. */
const completeBody = (head: Head, rest: Buffer, ended: boolean): Buffer | "incomplete" | "bad" => {
  if (head.headers.get("transfer-encoding")?.toLowerCase().includes("chunked")) return dechunk(rest)
  const length = head.headers.get("content-length")
  if (length !== undefined) {
    const n = Number(length)
    if (!Number.isInteger(n) || n < 0) return "bad"
    return rest.length >= n ? rest.subarray(0, n) : "incomplete"
  }
  // No length: a response to `connection: close` ends with the connection (or has no body at all).
  return ended ? rest : "incomplete"
}

/**
 * Sends `request` over a fresh connection and reads one answer. A stream
 * (server-sent events) is cut after its headers. Never rejects: a missing
 * answer is a `RawFailure` the caller reports.
 */
export const sendRaw = (port: number, request: RawRequest, timeoutMs: number): Promise<RawOutcome> =>
  new Promise((resolve) => {
    const started = Date.now()
    const chunks: Array<Buffer> = []
    let received = 0
    let settled = false
    const socket = net.connect({ port, host: "127.0.0.1" })
    const finish = (outcome: RawOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(outcome)
    }
    const timer = setTimeout(() => finish({ _tag: "Hang", afterMs: Date.now() - started, received }), timeoutMs)
    const attempt = (ended: boolean) => {
      const bytes = Buffer.concat(chunks)
      const head = parseHead(bytes)
      if (head === "bad") return finish({ _tag: "Unparseable", head: bytes.subarray(0, 200).toString("latin1") })
      if (head === "incomplete")
        return ended ? finish({ _tag: "Dropped", code: "closed before an answer", received }) : undefined
      const streamed = head.headers.get("content-type")?.startsWith("text/event-stream") ?? false
      // A HEAD answer, a 204 and a 304 have no body, whatever their headers say.
      const bodiless = request.method.toUpperCase() === "HEAD" || head.status === 204 || head.status === 304
      if (bodiless)
        return finish({
          _tag: "Answered",
          response: { status: head.status, headers: head.headers, body: Buffer.alloc(0), streamed: false }
        })
      if (streamed)
        return finish({
          _tag: "Answered",
          response: { status: head.status, headers: head.headers, body: Buffer.alloc(0), streamed }
        })
      const body = completeBody(head, bytes.subarray(head.bodyStart), ended)
      if (body === "bad") return finish({ _tag: "Unparseable", head: bytes.subarray(0, 200).toString("latin1") })
      if (body === "incomplete") {
        return ended ? finish({ _tag: "Dropped", code: "closed in the middle of the body", received }) : undefined
      }
      return finish({ _tag: "Answered", response: { status: head.status, headers: head.headers, body, streamed } })
    }
    // Written in pieces, with backpressure, and no further once the answer is in: a server may refuse a
    // big body (413) before reading it, and a client still pushing bytes would only provoke a reset.
    // Not `end` at the last piece: Node's server aborts a request whose client half-closes;
    // `connection: close` ends the exchange after the answer.
    const bytes = encodeRequest(`127.0.0.1:${port}`, request)
    let written = 0
    const pump = () => {
      while (!settled && written < bytes.length) {
        const piece = bytes.subarray(written, written + 64 * 1024)
        written += piece.length
        if (!socket.write(piece)) return void socket.once("drain", pump)
      }
    }
    socket.on("connect", pump)
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk)
      received += chunk.length
      if (received > maxResponseBytes)
        return finish({ _tag: "Dropped", code: `answer over ${maxResponseBytes} bytes`, received })
      attempt(false)
    })
    socket.on("end", () => attempt(true))
    socket.on("error", (error: NodeJS.ErrnoException) => {
      // A reset after a whole answer arrived (the server refused a big body early) still is that answer.
      if (chunks.length > 0) return attempt(true)
      finish({ _tag: "Dropped", code: error.code ?? error.message, received })
    })
  })
