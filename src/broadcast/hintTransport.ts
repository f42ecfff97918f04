/** The three kinds of message the bus carries, each on channels of its own. */
export type Carried = "hints" | "control" | "caches"

/** Hands one message, as received, to the bus (synchronous: called from an ioredis callback). */
export type Deliver = (carried: Carried, message: string) => void

/**
 * How the bus reaches Redis for hints: one channel on one server, or sharded partition channels on a
 * cluster. The transport subscribes (for the scope), keeps the subscription's health told, and delivers.
 */
export interface HintTransport {
  /** Publishes one workspace's hint where every instance's subscription hears it. */
  readonly publishHint: (workspace: string, json: string) => Promise<unknown>
  /** Whether both connections are up right now. */
  readonly connected: () => boolean
}
