/// <reference lib="es2024.arraybuffer" />
import { Effect } from "effect"
import type { Readable } from "node:stream"

/** The body went beyond the limit while it streamed in. */
export class BodyTooLarge {
  readonly _tag = "BodyTooLarge"
}

/** The client went away (or the connection broke) before the body was complete. */
export class BodyAborted {
  readonly _tag = "BodyAborted"
}

/**
 * Frees a chunk's bytes now instead of at the next garbage collection. Node's
 * HTTP parser hands each body chunk over in an ArrayBuffer of its own, whose
 * bytes live outside V8's heap until a collection finds the buffer dead; a
 * server refusing bodies allocates too little on its heap for a collection
 * to come soon, so every refused body's bytes would stay (up to V8's external
 * memory limit, some 64 MiB). Detaching the buffer (`transfer(0)`) frees them
 * at once. A chunk that is a view into a larger buffer (a pool slice) is left
 * to the collector.
 */
const release = (chunk: Buffer) => {
  const buffer = chunk.buffer
  if (buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength) {
    buffer.transfer(0)
  }
}

/**
 * Reads a request body of at most `limit` bytes. The moment one more byte
 * arrives it stops reading (the stream is paused, so the socket stops taking
 * data and the sender is held back by TCP) and fails: memory holds at most
 * `limit` bytes per request, however large the body the client meant to send.
 * The chunks read are freed as soon as they are copied into the body or
 * dropped with a refused one (`release`), unless another listener got them too.
 */
export const readBody = (source: Readable, limit: number): Effect.Effect<Uint8Array, BodyTooLarge | BodyAborted> =>
  Effect.callback<Uint8Array, BodyTooLarge | BodyAborted>((resume) => {
    const chunks: Array<Buffer> = []
    let received = 0
    // Only a reader that is the chunks' one consumer may free them.
    let sole = true
    const done = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onAborted)
      source.off("aborted", onAborted)
      if (sole) for (const chunk of chunks) release(chunk)
      chunks.length = 0
    }
    const onData = (chunk: Buffer) => {
      if (source.listenerCount("data") > 1) sole = false
      received += chunk.length
      chunks.push(chunk)
      if (received > limit) {
        done()
        source.pause()
        resume(Effect.fail(new BodyTooLarge()))
      }
    }
    const onEnd = () => {
      const body = Buffer.concat(chunks, received)
      done()
      resume(Effect.succeed(body))
    }
    const onAborted = () => {
      done()
      resume(Effect.fail(new BodyAborted()))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onAborted)
    source.once("aborted", onAborted)
    return Effect.sync(done)
  })
