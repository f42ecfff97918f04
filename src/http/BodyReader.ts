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
 * Reads a request body of at most `limit` bytes. The moment one more byte
 * arrives it stops reading (the stream is paused, so the socket stops taking
 * data and the sender is held back by TCP) and fails: memory holds at most
 * `limit` bytes per request, however large the body the client meant to send.
 */
export const readBody = (source: Readable, limit: number): Effect.Effect<Uint8Array, BodyTooLarge | BodyAborted> =>
  Effect.callback<Uint8Array, BodyTooLarge | BodyAborted>((resume) => {
    const chunks: Array<Buffer> = []
    let received = 0
    const cleanup = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onAborted)
      source.off("aborted", onAborted)
    }
    const onData = (chunk: Buffer) => {
      received += chunk.length
      if (received > limit) {
        cleanup()
        source.pause()
        chunks.length = 0
        resume(Effect.fail(new BodyTooLarge()))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      cleanup()
      resume(Effect.succeed(Buffer.concat(chunks, received)))
    }
    const onAborted = () => {
      cleanup()
      resume(Effect.fail(new BodyAborted()))
    }
    source.on("data", onData)
    source.once("end", onEnd)
    source.once("error", onAborted)
    source.once("aborted", onAborted)
    return Effect.sync(cleanup)
  })
