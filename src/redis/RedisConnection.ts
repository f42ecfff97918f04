import { Context, Duration, Effect, Layer, Redacted } from "effect"
import { Redis } from "ioredis"
import { PubSubUnavailable } from "../api/errors"

export interface RedisConnectionShape {
  /** Runs commands; fails fast (no offline queue) while Redis is unreachable. */
  readonly command: Redis
  /** Dedicated to SUBSCRIBE: a subscribed connection cannot run other commands. */
  readonly subscriber: Redis
  /** Starts every key and channel this deployment uses (`REDIS_PREFIX`). */
  readonly prefix: string
}

export interface RedisConnectionOptions {
  /** How long building the layer waits for each client to be ready. Default 5 s. */
  readonly readyTimeout?: Duration.Input
  /** The deployment's prefix for keys and channels (`redisPrefixOf`); default none. */
  readonly prefix?: string
}

/** `redis://user:secret@host` -> `redis://host`, for messages and logs. */
const describe = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}`
  } catch {
    return "redis"
  }
}

const unavailable = (message: string) => new PubSubUnavailable({ message })

/** Resolves once the client is ready; never fails by itself (ioredis keeps reconnecting). */
const awaitReady = (client: Redis) =>
  Effect.callback<void>((resume) => {
    if (client.status === "ready") return resume(Effect.void)
    const onReady = () => resume(Effect.void)
    client.once("ready", onReady)
    return Effect.sync(() => client.off("ready", onReady))
  })

const acquireClient = (url: string, role: string, timeout: Duration.Input) =>
  Effect.gen(function* () {
    const log = Effect.runForkWith(yield* Effect.context<never>())
    const target = describe(url)
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const client = new Redis(url, {
          // Fail fast while disconnected: callers answer 503 instead of hanging.
          maxRetriesPerRequest: 1,
          enableOfflineQueue: false,
          commandTimeout: 2_000,
          connectionName: `audit-broadcast:${role}`,
          // Commands issued in one tick go out in one write (heartbeats arrive many at a time).
          enableAutoPipelining: role === "command"
        })
        // One warning per outage, not one per reconnect attempt.
        let down = false
        client.on("error", (error: Error) => {
          if (down) return
          down = true
          log(Effect.logWarning(`redis ${role}: ${error.message}`).pipe(Effect.annotateLogs("redis", target)))
        })
        client.on("ready", () => {
          if (!down) return
          down = false
          log(Effect.logInfo(`redis ${role}: ready again`).pipe(Effect.annotateLogs("redis", target)))
        })
        return client
      }),
      (client) =>
        Effect.tryPromise(() => client.quit()).pipe(
          Effect.timeout("1 second"),
          Effect.ignore,
          Effect.ensuring(Effect.sync(() => client.disconnect()))
        )
    )
    // Waited for outside the (uninterruptible) acquire, so the timeout can cut it short.
    yield* awaitReady(client).pipe(
      Effect.timeoutOrElse({
        duration: timeout,
        orElse: () =>
          Effect.fail(
            unavailable(
              `redis ${role} at ${target} not ready after ${Duration.format(Duration.fromInputUnsafe(timeout))}`
            )
          )
      })
    )
    return client
  })

const make = (url: string | Redacted.Redacted<string>, options: RedisConnectionOptions = {}) =>
  Effect.gen(function* () {
    const plain = Redacted.isRedacted(url) ? Redacted.value(url) : url
    const timeout = options.readyTimeout ?? "5 seconds"
    const [command, subscriber] = yield* Effect.all(
      [acquireClient(plain, "command", timeout), acquireClient(plain, "subscriber", timeout)],
      { concurrency: 2 }
    )
    return { command, subscriber, prefix: options.prefix ?? "" } satisfies RedisConnectionShape
  })

/** Two ioredis clients on one URL, and the deployment's prefix; the clients quit when the layer's scope closes. */
export class RedisConnection extends Context.Service<RedisConnection, RedisConnectionShape>()("RedisConnection") {
  static layer(
    url: string | Redacted.Redacted<string>,
    options?: RedisConnectionOptions
  ): Layer.Layer<RedisConnection, PubSubUnavailable> {
    return Layer.effect(RedisConnection, make(url, options))
  }
}
