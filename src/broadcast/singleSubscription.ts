import { Effect } from "effect"
import { PubSubUnavailable } from "../api/errors"
import type { SingleRedis } from "../redis/RedisConnection"
import type { SubscriptionHealth } from "./BroadcastStatus"
import type { Deliver, HintTransport } from "./hintTransport"

export interface Channels {
  readonly hints: string
  readonly control: string
  readonly caches: string
}

const unavailable = (error: unknown) =>
  new PubSubUnavailable({ message: `redis: ${error instanceof Error ? error.message : String(error)}` })

/** On one Redis server: the three channels subscribed once on the subscriber connection. */
export const subscribeSingle = (redis: SingleRedis, channels: Channels, health: SubscriptionHealth, deliver: Deliver) =>
  Effect.gen(function* () {
    const { command, subscriber } = redis
    const run = Effect.runForkWith(yield* Effect.context<never>())
    const onMessage = (from: string, message: string) => {
      if (from === channels.hints) deliver("hints", message)
      else if (from === channels.control) deliver("control", message)
      else if (from === channels.caches) deliver("caches", message)
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => subscriber.on("message", onMessage)),
      () => Effect.sync(() => subscriber.off("message", onMessage))
    )
    const all = [channels.hints, channels.control, channels.caches] as const

    // Subscribed once per instance; ioredis re-subscribes by itself after a reconnect.
    yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => subscriber.subscribe(...all), catch: unavailable }),
      () => Effect.tryPromise(() => subscriber.unsubscribe(...all)).pipe(Effect.ignore)
    )

    // The subscription's outages. Lost when the subscriber's connection closes (again and again while
    // ioredis retries: counted once); restored once SUBSCRIBE is acknowledged on the new connection
    // (ioredis sends its own after "ready"; asking again is harmless and tells us when it holds).
    const onClose = () => void run(health.lost)
    const onReady = () =>
      void run(
        Effect.tryPromise(() => subscriber.subscribe(...all)).pipe(Effect.andThen(health.restored), Effect.ignore)
      )
    yield* Effect.acquireRelease(
      Effect.sync(() => subscriber.on("close", onClose).on("ready", onReady)),
      () => Effect.sync(() => subscriber.off("close", onClose).off("ready", onReady))
    )

    return {
      publishHint: (_workspace, json) => command.publish(channels.hints, json),
      connected: () => command.status === "ready" && subscriber.status === "ready"
    } satisfies HintTransport
  })
