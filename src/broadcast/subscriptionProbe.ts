import { randomUUID } from "node:crypto"
import { Effect } from "effect"
import type { Duration } from "effect"

export interface ProbeChannel {
  readonly channel: string
  /** Publishes `nonce` on the channel (SPUBLISH for a sharded one, PUBLISH for a classic one). */
  readonly publish: (nonce: string) => Promise<unknown>
}

/**
 * Proof that this instance's subscriptions deliver: a round publishes a nonce of this instance on
 * every probe channel and succeeds once each has come back through the subscription, fails when one
 * publish fails or `timeout` passes first. Other instances' probes (another nonce) are ignored.
 */
export const makeProbe = (channels: ReadonlyArray<ProbeChannel>) => {
  const instance = randomUUID()
  let rounds = 0
  let current: { readonly nonce: string; readonly waiting: Set<string>; readonly done: () => void } | undefined

  /** Called with every message of a probe channel, from the subscriber's callback. */
  const received = (channel: string, message: string) => {
    if (current === undefined || message !== current.nonce) return
    current.waiting.delete(channel)
    if (current.waiting.size === 0) current.done()
  }

  const round = (timeout: Duration.Input) =>
    Effect.callback<void, Error>((resume) => {
      const nonce = `${instance}:${++rounds}`
      current = { nonce, waiting: new Set(channels.map(({ channel }) => channel)), done: () => resume(Effect.void) }
      Promise.all(channels.map(({ publish }) => publish(nonce))).catch((error: unknown) =>
        resume(Effect.fail(error instanceof Error ? error : new Error(String(error))))
      )
      return Effect.sync(() => {
        if (current?.nonce === nonce) current = undefined
      })
    }).pipe(Effect.timeout(timeout))

  return { received, round }
}
