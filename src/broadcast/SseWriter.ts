import type { HintSink } from "./BroadcastHub"

/**
 * What a writer writes or holds: an encoded event, and a key under which two
 * waiting events mean the same (a hint, or the stream's own `resync`).
 */
export interface QueuedEvent {
  readonly key: string
  readonly event: Uint8Array
}

/** The part of a socket (Node's `net.Socket`) a writer uses. */
export interface SseSocket {
  write(chunk: Uint8Array): boolean
  once(event: "drain", listener: () => void): unknown
  end(callback: () => void): unknown
  destroy(): unknown
  readonly destroyed: boolean
}

/** `waiting`: attached, nothing written yet (hints wait in the buffer). */
type State = "waiting" | "open" | "closed"

/**
 * One SSE stream's body: writes pre-encoded events straight to the socket
 * while it keeps up. Once a write is refused (the client reads too slowly) it
 * holds at most `capacity` hints until the socket drains: an identical hint
 * already waiting is not queued twice (both mean the same refetch), and when
 * the buffer is full the oldest is dropped. Offering never blocks and never
 * fails, so one slow client delays nobody else.
 *
 * Hints offered before `start` wait in the same buffer, so a stream can be
 * attached to the hub before its first byte goes out and miss nothing after it.
 */
export class SseWriter implements HintSink {
  private state: State = "waiting"
  /** Waiting hints: before `start`, and while the socket is backed up; undefined while writes go straight through. */
  private pending: Array<QueuedEvent> | undefined = []
  private pendingKeys: Set<string> | undefined = undefined
  /** Hints this stream lost to a full buffer. */
  dropped = 0

  constructor(
    private readonly socket: SseSocket,
    private readonly capacity: number
  ) {}

  /** Writes `head` (status line, headers, opening comment), then the hints that arrived meanwhile. */
  start(head: Uint8Array): void {
    if (this.state !== "waiting") return
    this.state = "open"
    if (this.socket.write(head)) this.flush()
    else this.awaitDrain()
  }

  offer(hint: QueuedEvent): void {
    if (this.state === "closed" || this.socket.destroyed) return
    if (this.pending === undefined) {
      if (!this.socket.write(hint.event)) this.backUp()
      return
    }
    this.hold(hint)
  }

  /** A comment that keeps proxies from closing an idle stream; a backed-up stream is not idle and gets none. */
  keepAlive(comment: Uint8Array): void {
    if (this.state !== "open" || this.pending !== undefined || this.socket.destroyed) return
    if (!this.socket.write(comment)) this.backUp()
  }

  /** Hints waiting for the socket. */
  get waiting(): number {
    return this.pending?.length ?? 0
  }

  /** Drops the connection (shutdown): the tab reconnects, to another instance if need be. */
  destroy(): void {
    this.socket.destroy()
  }

  /**
   * Ends the stream on purpose (shutdown): the hints still waiting are
   * dropped (they only mean refetch), `last` is written, and the connection
   * closes once it has gone out.
   */
  end(last: Uint8Array): void {
    if (this.state === "closed" || this.socket.destroyed) return
    const started = this.state === "open"
    this.close()
    if (!started) return void this.socket.destroy()
    this.socket.write(last)
    this.socket.end(() => this.socket.destroy())
  }

  /** Stops writing and lets go of the waiting hints (the socket has closed). */
  close(): void {
    this.state = "closed"
    this.pending = undefined
    this.pendingKeys = undefined
  }

  private backUp(): void {
    this.pending = []
    this.awaitDrain()
  }

  private awaitDrain(): void {
    this.socket.once("drain", () => this.flush())
  }

  private hold(hint: QueuedEvent): void {
    const pending = this.pending ?? []
    const keys = this.pendingKeys ?? new Set(pending.map((waiting) => waiting.key))
    this.pending = pending
    this.pendingKeys = keys
    if (keys.has(hint.key)) return
    if (pending.length >= this.capacity) {
      const oldest = pending.shift()
      if (oldest !== undefined) keys.delete(oldest.key)
      this.dropped++
    }
    pending.push(hint)
    keys.add(hint.key)
  }

  private flush(): void {
    const pending = this.pending
    if (this.state !== "open" || pending === undefined) return
    for (let i = 0; i < pending.length; i++) {
      const hint = pending[i]
      if (hint === undefined) continue
      this.pendingKeys?.delete(hint.key)
      if (!this.socket.write(hint.event)) {
        pending.splice(0, i + 1)
        this.awaitDrain()
        return
      }
    }
    this.pending = undefined
    this.pendingKeys = undefined
  }
}
