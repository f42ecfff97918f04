import { Effect } from "effect"
import type { Duration } from "effect"
import { Cluster } from "ioredis"
import { acquireClient, reconnectDelay } from "./clientLifecycle"

/** One entry of `REDIS_CLUSTER_NODES`: any node will do, the client discovers the rest. */
export interface ClusterNode {
  readonly host: string
  readonly port: number
}

const describe = (nodes: ReadonlyArray<ClusterNode>) =>
  `redis-cluster://${nodes.map(({ host, port }) => `${host}:${port}`).join(",")}`

const commandClient = (nodes: ReadonlyArray<ClusterNode>) =>
  new Cluster(
    nodes.map(({ host, port }) => ({ host, port })),
    {
      // Fail fast while a slot has no reachable master: callers answer 503 instead of hanging.
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      // An auto-pipeline holds every command for one master; when one of them is answered MOVED (its slot
      // has moved) and another succeeds, ioredis rejects the MOVED one instead of following it. A hint
      // publish goes out on its own, so a moved partition is followed (and the slot map refreshed) at once.
      autoPipeliningIgnoredCommands: ["spublish"],
      clusterRetryStrategy: reconnectDelay,
      redisOptions: {
        maxRetriesPerRequest: 1,
        commandTimeout: 2_000,
        connectTimeout: 1_000,
        connectionName: "audit-broadcast:command"
      }
    }
  )

const subscriberClient = (nodes: ReadonlyArray<ClusterNode>) =>
  new Cluster(
    nodes.map(({ host, port }) => ({ host, port })),
    {
      // One connection per master for SSUBSCRIBE: a failover or a moved slot resubscribes at once (ioredis 6).
      shardedSubscribers: true,
      clusterRetryStrategy: reconnectDelay,
      redisOptions: {
        // A dead master is given up on quickly, so its promoted replica is found sooner.
        connectTimeout: 1_000,
        connectionName: "audit-broadcast:subscriber"
      }
    }
  )

/** The command and the subscriber cluster clients; both quit when the scope closes. */
export const makeClusterClients = (nodes: ReadonlyArray<ClusterNode>, timeout: Duration.Input) =>
  Effect.all(
    [
      acquireClient(() => commandClient(nodes), "command", describe(nodes), timeout),
      acquireClient(() => subscriberClient(nodes), "subscriber", describe(nodes), timeout)
    ],
    { concurrency: 2 }
  )
