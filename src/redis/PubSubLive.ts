import { Effect, Layer, Option } from "effect"
import * as BroadcastBusInProcess from "../broadcast/BroadcastBusInProcess"
import * as BroadcastBusRedis from "../broadcast/BroadcastBusRedis"
import { AppConfig } from "../config/AppConfig"
import * as PresenceStoreInProcess from "../presence/PresenceStoreInProcess"
import * as PresenceStoreRedis from "../presence/PresenceStoreRedis"
import { RedisConnection } from "./RedisConnection"

/**
 * The broadcast bus and presence store: on Redis when `REDIS_URL` is set
 * (any number of instances), in this process otherwise (single instance only).
 */
export const PubSubLive = Layer.unwrapEffect(
  Effect.map(AppConfig, (config) =>
    Option.match(config.redisUrl, {
      onSome: (url) =>
        Layer.merge(BroadcastBusRedis.layer, PresenceStoreRedis.layer).pipe(Layer.provide(RedisConnection.layer(url))),
      onNone: () => Layer.merge(BroadcastBusInProcess.layer, PresenceStoreInProcess.layer)
    })
  )
)
