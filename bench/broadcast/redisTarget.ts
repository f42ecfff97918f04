import type { ClusterNode } from "../../src/redis/clusterConnection"
import type { BenchRedis } from "./protocol"

/** `127.0.0.1:7000,127.0.0.1:7001` (the form of `REDIS_CLUSTER_NODES`) as the cluster client takes it. */
export const clusterNodes = (nodes: string): ReadonlyArray<ClusterNode> =>
  nodes.split(",").map((address) => {
    const colon = address.lastIndexOf(":")
    return { host: address.slice(0, colon), port: Number(address.slice(colon + 1)) }
  })

/** The service's environment for a pass on `redis`. */
export const redisEnv = (redis: BenchRedis): Record<string, string> =>
  redis._tag === "Single" ? { REDIS_URL: redis.url } : { REDIS_CLUSTER_NODES: redis.nodes }

/** How a pass is named in logs and in the report. */
export const describeRedis = (redis: BenchRedis) =>
  redis._tag === "Single" ? "single Redis" : "Redis Cluster (3 masters, 3 replicas)"
