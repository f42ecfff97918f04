import { Effect, Exit, Scope } from "effect"
import { ownRedisCluster } from "../../test/support/ownRedisCluster"

export interface BenchCluster {
  /** `127.0.0.1:<port>,...`, the form of `REDIS_CLUSTER_NODES`. */
  readonly startupNodes: string
  /** From the first `redis-server` started to every node agreeing on a healthy cluster. */
  readonly startSeconds: number
  /** Kills every node (by pid) and removes their directory; safe to call twice. */
  readonly close: () => Promise<void>
}

const open = new Set<Scope.Closeable>()

/** A Redis Cluster of the bench's own (the tests' ownRedisCluster: 3 masters, 3 replicas, free loopback ports). */
export const startBenchCluster = async (): Promise<BenchCluster> => {
  const scope = Effect.runSync(Scope.make())
  open.add(scope)
  const close = async () => {
    if (!open.delete(scope)) return
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  const started = performance.now()
  try {
    const cluster = await Effect.runPromise(Scope.provide(ownRedisCluster, scope))
    return { startupNodes: cluster.startupNodes, startSeconds: (performance.now() - started) / 1000, close }
  } catch (error) {
    await close()
    throw error
  }
}

/** Closes every cluster still open (a failed or interrupted run). */
export const closeBenchClusters = () =>
  Promise.all([...open].map((scope) => Effect.runPromise(Scope.close(scope, Exit.void)))).then(() => open.clear())
