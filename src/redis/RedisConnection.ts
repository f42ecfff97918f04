import { Context, Effect, Layer, Redacted } from "effect"
import type { Duration } from "effect"
import type { Cluster } from "ioredis"
import { Redis } from "ioredis"
import type { PubSubUnavailable } from "../api/errors"
import { acquireClient, reconnectDelay } from "./clientLifecycle"
import type { ClusterNode } from "./clusterConnection"
import { makeClusterClients } from "./clusterConnection"

interface Connections<Client> {
  /** Runs commands; fails fast (no offline queue) while Redis is unreachable. */
  readonly command: Client
  /** Dedicated to (S)SUBSCRIBE: a subscribed connection cannot run other commands. */
  readonly subscriber: Client
  /** Starts every key and channel this deployment uses (`REDIS_PREFIX`). */
  readonly prefix: string
}

/** One Redis server (`REDIS_URL`). */
export interface SingleRedis extends Connections<Redis> {
  readonly kind: "single"
}

/** A Redis Cluster (`REDIS_CLUSTER_NODES`): commands routed by slot, hints on sharded pub/sub. */
export interface ClusterRedis extends Connections<Cluster> {
  readonly kind: "cluster"
}

export type RedisConnectionShape = SingleRedis | ClusterRedis

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

const single = (url: string, role: string, timeout: Duration.Input) =>
  acquireClient(
    () =>
      new Redis(url, {
        // Fail fast while disconnected: callers answer 503 instead of hanging.
        maxRetriesPerRequest: 1,
        enableOfflineQueue: false,
        commandTimeout: 2_000,
        retryStrategy: reconnectDelay,
        connectionName: `audit-broadcast:${role}`,
        // Commands issued in one tick go out in one write (heartbeats arrive many at a time).
        enableAutoPipelining: role === "command"
      }),
    role,
    describe(url),
    timeout
  )

const make = (url: string | Redacted.Redacted<string>, options: RedisConnectionOptions = {}) =>
  Effect.gen(function* () {
    const plain = Redacted.isRedacted(url) ? Redacted.value(url) : url
    const timeout = options.readyTimeout ?? "5 seconds"
    const [command, subscriber] = yield* Effect.all(
      [single(plain, "command", timeout), single(plain, "subscriber", timeout)],
      { concurrency: 2 }
    )
    return { kind: "single", command, subscriber, prefix: options.prefix ?? "" } satisfies SingleRedis
  })

/** Two ioredis clients (one server, or one cluster), and the deployment's prefix; they quit when the layer's scope closes. */
export class RedisConnection extends Context.Service<RedisConnection, RedisConnectionShape>()("RedisConnection") {
  static layer(
    url: string | Redacted.Redacted<string>,
    options?: RedisConnectionOptions
  ): Layer.Layer<RedisConnection, PubSubUnavailable> {
    return Layer.effect(RedisConnection, make(url, options))
  }

  /** The same on a Redis Cluster, reached through any of `nodes` (`REDIS_CLUSTER_NODES`). */
  static layerCluster(
    nodes: ReadonlyArray<ClusterNode>,
    options?: RedisConnectionOptions
  ): Layer.Layer<RedisConnection, PubSubUnavailable> {
    return Layer.effect(
      RedisConnection,
      Effect.map(
        makeClusterClients(nodes, options?.readyTimeout ?? "5 seconds"),
        ([command, subscriber]): ClusterRedis => ({
          kind: "cluster",
          command,
          subscriber,
          prefix: options?.prefix ?? ""
        })
      )
    )
  }
}
