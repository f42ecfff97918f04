import { Effect, Queue, Schedule } from "effect"
import { PubSubUnavailable } from "../api/errors"
import { keySlot } from "../redis/keySlot"
import type { ClusterRedis } from "../redis/RedisConnection"
import type { SubscriptionHealth } from "./BroadcastStatus"
import { partitionChannels, partitionOf } from "./hintPartitions"
import type { Deliver, HintTransport } from "./hintTransport"
import { makeProbe } from "./subscriptionProbe"

export interface ClassicChannels {
  readonly control: string
  readonly caches: string
}

const unavailable = (error: unknown) =>
  new PubSubUnavailable({ message: `redis: ${error instanceof Error ? error.message : String(error)}` })

/** While the subscription is known good, a probe round this often catches a loss no event told of. */
const checkEvery = "5 seconds"
/** While it is lost, a probe round this often finds out when it is back. */
const retryEvery = "200 millis"

/**
 * On a Redis Cluster: hints on the sharded partition channels (all of them SSUBSCRIBEd on every
 * instance, through ioredis's one connection per master), revocations and cache invalidations on
 * classic channels. Each partition has a probe channel in its slot, subscribed with it in one
 * SSUBSCRIBE, so a probe that comes back proves the partition's subscription holds.
 *
 * ioredis resubscribes by itself after a failover or a moved slot, silently; hints published in
 * between are lost. So any event that may open such a gap (a lost node connection; a slot map in
 * which a partition's master changed) counts as a loss at once, and the subscription is restored
 * only when a probe round that no further such event interrupted has come back on every channel.
 */
export const subscribeCluster = (
  redis: ClusterRedis,
  classic: ClassicChannels,
  health: SubscriptionHealth,
  deliver: Deliver
) =>
  Effect.gen(function* () {
    const { command, prefix, subscriber } = redis
    const run = Effect.runForkWith(yield* Effect.context<never>())
    const hints = partitionChannels(prefix)
    const hintSet = new Set(hints)
    const shardedProbes = hints.map((channel) => `${channel}:probe`)
    const classicProbe = `${prefix}broadcast:probe`
    const probe = makeProbe([
      ...shardedProbes.map((channel) => ({ channel, publish: (nonce: string) => command.spublish(channel, nonce) })),
      { channel: classicProbe, publish: (nonce: string) => command.publish(classicProbe, nonce) }
    ])

    const onSharded = (channel: string, message: string) =>
      hintSet.has(channel) ? deliver("hints", message) : probe.received(channel, message)
    const onClassic = (channel: string, message: string) => {
      if (channel === classic.control) deliver("control", message)
      else if (channel === classic.caches) deliver("caches", message)
      else if (channel === classicProbe) probe.received(channel, message)
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => subscriber.on("smessage", onSharded).on("message", onClassic)),
      () => Effect.sync(() => subscriber.off("smessage", onSharded).off("message", onClassic))
    )

    const classicChannels = [classic.control, classic.caches, classicProbe] as const
    // ioredis takes one slot per SSUBSCRIBE: each partition with its probe channel (one hash tag).
    const subscribeAll = Promise.all([
      ...hints.map((channel, i) => subscriber.ssubscribe(channel, shardedProbes[i] ?? channel)),
      subscriber.subscribe(...classicChannels)
    ])
    yield* Effect.acquireRelease(Effect.tryPromise({ try: () => subscribeAll, catch: unavailable }), () =>
      Effect.tryPromise(() =>
        Promise.all([
          ...hints.map((channel, i) => subscriber.sunsubscribe(channel, shardedProbes[i] ?? channel)),
          subscriber.unsubscribe(...classicChannels)
        ])
      ).pipe(Effect.ignore)
    )

    // Which master serves each partition, as the subscriber's slot map says.
    const partitionSlots = hints.map(keySlot)
    const ownersNow = () => partitionSlots.map((slot) => subscriber.slots[slot]?.[0] ?? "").join(",")
    let owners = ownersNow()
    // Counts the events that may have opened a gap: a probe round is proof only if none came during it.
    let disturbances = 0
    const kicks = yield* Queue.sliding<void>(1)
    const disturbed = () => {
      disturbances++
      run(Effect.andThen(health.lost, Queue.offer(kicks, undefined)))
    }
    const onNodeLost = () => disturbed()
    const onRefresh = () => {
      const now = ownersNow()
      if (now === owners) return
      owners = now
      disturbed()
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => subscriber.on("-node", onNodeLost).on("refresh", onRefresh)),
      () => Effect.sync(() => subscriber.off("-node", onNodeLost).off("refresh", onRefresh))
    )

    const recover = Effect.gen(function* () {
      const before = disturbances
      const proven = yield* probe.round("1 second").pipe(
        Effect.as(true),
        Effect.orElseSucceed(() => false)
      )
      if (proven && disturbances === before) {
        owners = ownersNow()
        yield* health.restored
      } else yield* Effect.sleep(retryEvery)
    })
    const check = Effect.race(Queue.take(kicks), Effect.sleep(checkEvery)).pipe(
      Effect.andThen(Effect.map(health.status, (status) => status.subscribed)),
      Effect.flatMap((subscribed) =>
        subscribed ? probe.round(checkEvery).pipe(Effect.catch(() => health.lost)) : Effect.void
      )
    )
    const watch = Effect.flatMap(health.status, (status) => (status.subscribed ? check : recover))
    yield* Effect.forkScoped(Effect.repeat(watch, Schedule.forever))

    return {
      publishHint: (workspace, json) => command.spublish(hints[partitionOf(workspace)] ?? hints[0] ?? "", json),
      connected: () => command.status === "ready" && subscriber.status === "ready"
    } satisfies HintTransport
  })
