import { Result, Schema, SchemaIssue } from "effect"
import { ResponseShapeError } from "./errors"
import { BroadcastData, Resync, StreamEnd, StreamShutdown } from "./wire"
import type { StreamEventName } from "./wire"
import { parseJson } from "../json/parseJson"

/** The decoded data of each event a stream carries (docs/broadcast.md, "The stream contract"). */
export interface StreamEventData {
  readonly changed: BroadcastData
  readonly presence: BroadcastData
  readonly resync: Resync
  readonly end: StreamEnd
  readonly shutdown: StreamShutdown
}

/** Each event's data decoded with the server's own schema of it. */
const decoders: {
  readonly [K in StreamEventName]: (input: unknown) => Result.Result<StreamEventData[K], Schema.SchemaError>
} = {
  changed: Schema.decodeUnknownResult(BroadcastData),
  presence: Schema.decodeUnknownResult(BroadcastData),
  resync: Schema.decodeUnknownResult(Resync),
  end: Schema.decodeUnknownResult(StreamEnd),
  shutdown: Schema.decodeUnknownResult(StreamShutdown)
}

const formatIssue = SchemaIssue.makeFormatterDefault()

export const streamEventNames: ReadonlyArray<StreamEventName> = ["changed", "presence", "resync", "end", "shutdown"]

type Handler<K extends StreamEventName> = (data: StreamEventData[K]) => void

/**
 * The handlers of one stream, and the decoding of what reaches them: the
 * same whether the events come from this tab's EventSource or are relayed
 * from the tab that holds it. A datum that does not decode, or a handler
 * that throws, goes to `onError`; the other handlers still run.
 */
export const streamHandlers = (url: string, onError: (error: unknown) => void) => {
  const handlers: { readonly [K in StreamEventName]: Set<Handler<K>> } = {
    changed: new Set(),
    presence: new Set(),
    resync: new Set(),
    end: new Set(),
    shutdown: new Set()
  }
  const signedOutHandlers = new Set<() => void>()

  const run = <A>(set: Iterable<(data: A) => void>, data: A) => {
    for (const handler of [...set]) {
      try {
        handler(data)
      } catch (error) {
        onError(error)
      }
    }
  }

  const decode = <K extends StreamEventName>(name: K, raw: string): Result.Result<StreamEventData[K], unknown> => {
    try {
      const decode: (input: unknown) => Result.Result<StreamEventData[K], Schema.SchemaError> = decoders[name]
      const decoded = decode(parseJson(raw))
      return Result.mapError(decoded, (error) => new ResponseShapeError("SSE", url, formatIssue(error.issue)))
    } catch (error) {
      return Result.fail(new ResponseShapeError("SSE", url, String(error)))
    }
  }

  return {
    on: <K extends StreamEventName>(name: K, handler: Handler<K>): (() => void) => {
      // A fresh function per call, so one handler added twice is removed once per remover.
      const entry = (data: StreamEventData[K]) => handler(data)
      const set: Set<Handler<K>> = handlers[name]
      set.add(entry)
      return () => void set.delete(entry)
    },
    onSignedOut: (handler: () => void): (() => void) => {
      const entry = () => handler()
      signedOutHandlers.add(entry)
      return () => void signedOutHandlers.delete(entry)
    },
    /** Decodes `raw` (the event's `data` line) and hands it to the handlers of `name`; returns the decoded data, if any. */
    emit: <K extends StreamEventName>(name: K, raw: string): StreamEventData[K] | undefined => {
      const decoded = decode(name, raw)
      if (Result.isFailure(decoded)) {
        onError(decoded.failure)
        return undefined
      }
      const set: Set<Handler<K>> = handlers[name]
      run(set, decoded.success)
      return decoded.success
    },
    signedOut: () => run(signedOutHandlers, undefined),
    clear: () => {
      for (const name of streamEventNames) handlers[name].clear()
      signedOutHandlers.clear()
    }
  }
}

export type StreamHandlers = ReturnType<typeof streamHandlers>
