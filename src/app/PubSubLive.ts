import { Effect, Layer, Option } from "effect"
import * as BroadcastBusInProcess from "../broadcast/BroadcastBusInProcess"
import * as BroadcastBusRedis from "../broadcast/BroadcastBusRedis"
import * as LoginThrottleInProcess from "../auth/LoginThrottleInProcess"
import * as LoginThrottleRedis from "../auth/LoginThrottleRedis"
import { AppConfig, redisPrefixOf } from "../config/AppConfig"
import * as PresenceStoreInProcess from "../presence/PresenceStoreInProcess"
import * as PresenceStoreRedis from "../presence/PresenceStoreRedis"
import { RedisConnection } from "../redis/RedisConnection"

/**
 * The broadcast bus, the presence store and the login throttle's counters: on Redis when `REDIS_URL` is set, on
 * a Redis Cluster when `REDIS_CLUSTER_NODES` is
 * (any number of instances; every key and channel starts with the deployment's `REDIS_PREFIX`), in this
 * process otherwise (single instance only).
 */
export const PubSubLive = Layer.unwrap(
  Effect.gen(function* () {
    const config = yield* AppConfig
    const prefix = redisPrefixOf(config)
    // Config refuses REDIS_URL and REDIS_CLUSTER_NODES together.
    const connection = Option.isSome(config.redisClusterNodes)
      ? Option.some(RedisConnection.layerCluster(config.redisClusterNodes.value, { prefix }))
      : Option.map(config.redisUrl, (url) => RedisConnection.layer(url, { prefix }))
    return Option.match(connection, {
      onSome: (redis) =>
        Layer.mergeAll(BroadcastBusRedis.layer, PresenceStoreRedis.layer, LoginThrottleRedis.layer).pipe(
          Layer.provide(redis)
        ),
      onNone: () =>
        Layer.mergeAll(BroadcastBusInProcess.layer, PresenceStoreInProcess.layer, LoginThrottleInProcess.layer)
    })
  })
)
