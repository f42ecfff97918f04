import { Duration, Effect } from "effect"
import type { Cluster, Redis } from "ioredis"
import { PubSubUnavailable } from "../api/errors"

/** A single-server client or a cluster client: both report `status` and emit `ready`/`error`. */
export type RedisClient = Redis | Cluster

/** Resolves once the client is ready; never fails by itself (ioredis keeps reconnecting). */
const awaitReady = (client: RedisClient) =>
  Effect.callback<void>((resume) => {
    if (client.status === "ready") return resume(Effect.void)
    const onReady = () => resume(Effect.void)
    client.once("ready", onReady)
    return Effect.sync(() => client.off("ready", onReady))
  })

/**
 * Makes the client (in `create`), logs its outages (one warning per outage, not one per reconnect
 * attempt; info when ready again), quits it when the scope closes, and waits until it is ready,
 * failing after `timeout`. `target` names the server(s) without credentials.
 */
export const acquireClient = <C extends RedisClient>(
  create: () => C,
  role: string,
  target: string,
  timeout: Duration.Input
) =>
  Effect.gen(function* () {
    const log = Effect.runForkWith(yield* Effect.context<never>())
    const client = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const client = create()
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
            new PubSubUnavailable({
              message: `redis ${role} at ${target} not ready after ${Duration.format(Duration.fromInputUnsafe(timeout))}`
            })
          )
      })
    )
    return client
  })

/**
 * ioredis 6's default waits up to 5 s between reconnection attempts; an outage should end within
 * 2 s of Redis being back (as with ioredis 5), so the delay grows by 50 ms per attempt up to 2 s.
 */
export const reconnectDelay = (attempt: number) => Math.min(attempt * 50, 2_000)
