import { randomUUID } from "node:crypto"
import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Exit, Layer } from "effect"
import { BroadcastEnvelope } from "../../src/broadcast/Broadcast"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import * as BroadcastBusRedis from "../../src/broadcast/BroadcastBusRedis"
import { partitionChannels, partitionOf } from "../../src/broadcast/hintPartitions"
import { keySlot } from "../../src/redis/keySlot"
import { RedisConnection } from "../../src/redis/RedisConnection"
import { clusterNodesOf, ownRedisCluster } from "../support/ownRedisCluster"

const hint = (workspace: string, n: number) =>
  new BroadcastEnvelope({ workspace, type: "changed", data: { businessObject: "crm/deal", businessObjectId: `r${n}` } })

const slotOf = (workspace: string) => keySlot(partitionChannels("")[partitionOf(workspace)] ?? "")

/** A fresh workspace id whose partition is none of `taken` and whose slot `accept` takes. */
const workspaceWhere = (accept: (slot: number) => boolean, taken: ReadonlyArray<string> = []) => {
  for (;;) {
    const workspace = `test-${randomUUID()}`
    const partition = partitionOf(workspace)
    if (!taken.some((t) => partitionOf(t) === partition) && accept(slotOf(workspace))) return workspace
  }
}

describe("hint publishes on a Redis Cluster", () => {
  it.live(
    "follow a MOVED redirection after a slot moved, also when other commands to the old master go out in the same tick",
    () =>
      Effect.gen(function* () {
        const cluster = yield* ownRedisCluster
        const context = yield* Layer.build(
          BroadcastBusRedis.layer.pipe(Layer.provideMerge(RedisConnection.layerCluster(clusterNodesOf(cluster))))
        )
        const bus = Context.get(context, BroadcastBus)

        // Two workspaces on two partitions of one master: their publishes share that master's connection.
        const moving = workspaceWhere(() => true)
        const source = yield* cluster.ownerOf(slotOf(moving))
        const served = (slot: number) => source.slots.some(([from, to]) => slot >= from && slot <= to)
        const staying = workspaceWhere(served, [moving])
        // Both routed once, so the client's slot map names the source master for both.
        yield* Effect.all([bus.publish(hint(moving, 0)), bus.publish(hint(staying, 0))])

        const target = (yield* cluster.members).find(
          (m) => m.role === "master" && !m.failed && m.slots.length > 0 && m.port !== source.port
        )
        if (target === undefined) return yield* Effect.fail(new Error("no other master"))
        yield* cluster.migrateSlot(slotOf(moving), target.port)
        expect((yield* cluster.ownerOf(slotOf(moving))).port).toBe(target.port)

        // Issued together: the client still routes both to the source master, which answers MOVED for one.
        const before = yield* bus.status
        const outcomes = yield* Effect.all(
          Array.from({ length: 20 }, (_, n) => Effect.exit(bus.publish(hint(n % 2 === 0 ? moving : staying, n)))),
          { concurrency: "unbounded" }
        )
        const failed = outcomes.filter(Exit.isFailure).map((exit) => String(exit.cause))
        expect(failed).toEqual([])
        expect((yield* bus.status).droppedPublishes).toBe(before.droppedPublishes)
      }).pipe(Effect.scoped),
    { timeout: 60_000 }
  )
})
