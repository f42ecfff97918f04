import { Cluster, Redis } from "ioredis"
import type { BenchRedis } from "./protocol"
import { clusterNodes } from "./redisTarget"

/**
 * The Redis floor's two clients: a message published on one arrives on the other. On one server
 * PUBLISH -> SUBSCRIBE; on a cluster SPUBLISH -> SSUBSCRIBE on a sharded channel, the way hints go there.
 */
export interface FloorLink {
  /** Connects both and subscribes; `received` is called with each message's arrival. */
  readonly connect: (received: () => void) => Promise<void>
  readonly publish: () => Promise<unknown>
  readonly disconnect: () => void
}

export const makeFloorLink = (redis: BenchRedis, channel: string): FloorLink => {
  if (redis._tag === "Single") {
    const publisher = new Redis(redis.url, { lazyConnect: true })
    const subscriber = new Redis(redis.url, { lazyConnect: true })
    return {
      connect: async (received) => {
        await Promise.all([publisher.connect(), subscriber.connect()])
        subscriber.on("message", (from: string) => {
          if (from === channel) received()
        })
        await subscriber.subscribe(channel)
      },
      publish: () => publisher.publish(channel, "ping"),
      disconnect: () => {
        publisher.disconnect()
        subscriber.disconnect()
      }
    }
  }
  const nodes = clusterNodes(redis.nodes).map(({ host, port }) => ({ host, port }))
  const publisher = new Cluster(nodes, { lazyConnect: true })
  const subscriber = new Cluster(nodes, { lazyConnect: true, shardedSubscribers: true })
  return {
    connect: async (received) => {
      await Promise.all([publisher.connect(), subscriber.connect()])
      subscriber.on("smessage", (from: string) => {
        if (from === channel) received()
      })
      await subscriber.ssubscribe(channel)
    },
    publish: () => publisher.spublish(channel, "ping"),
    disconnect: () => {
      publisher.disconnect()
      subscriber.disconnect()
    }
  }
}
