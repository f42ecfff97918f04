import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Fiber, Layer, Option, Schedule } from "effect"
import type { Workspace } from "../../src/api/Workspace"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { partitionChannels, partitionOf } from "../../src/broadcast/hintPartitions"
import { keySlot } from "../../src/redis/keySlot"
import { awaitHint, hintId, isResubscribed } from "../broadcast/streamHelpers"
import { clientFor, createRecord, signedInMember } from "../support/api"
import { signIn } from "../support/http"
import { clusterNodesOf, ownRedisCluster } from "../support/ownRedisCluster"
import type { OwnRedisCluster } from "../support/ownRedisCluster"
import { openSse } from "../support/sse"
import type { SseStream } from "../support/sse"
import { baseUrl, freshWorkspace, testApp, testPassword } from "../support/TestApp"

/**
 * Broadcast on a Redis Cluster (3 masters, 3 replicas, own processes) through two service instances
 * (in-process layers) with 50 open streams over 5 workspaces, under writes on both instances, while
 * (a) the master serving the hot workspace's partition is SIGKILLed and (b) that partition's slot is
 * migrated to another master. Every stream keeps receiving within 10 s of the cluster being healthy
 * again; a hint a stream missed is always followed by a `resync` on that stream (the client re-reads),
 * so nothing is lost outside an outage the instance knew of.
 */

const deal = "crm/deal"
const workspaces = 5
const streamsPerWorkspacePerInstance = 5

interface Write {
  readonly workspace: string
  readonly id: string
  /** When the save's answer arrived: its hint is published after its commit, so not before this, give or take. */
  readonly at: number
}

interface Stream {
  readonly workspace: string
  readonly instance: "a" | "b"
  readonly sse: SseStream
}

const now = Effect.sync(() => Date.now())

/** Writes one deal after another in one workspace, alternating the two instances, until interrupted. */
const writer = (workspace: string, clients: ReadonlyArray<ReturnType<typeof clientFor>>, writes: Array<Write>) =>
  Effect.gen(function* () {
    for (let n = 0; ; n++) {
      const client = clients[n % clients.length]
      if (client === undefined) return
      const created = yield* createRecord(client, deal, { title: `w${n}` }).pipe(Effect.option)
      if (Option.isSome(created)) writes.push({ workspace, id: created.value.id, at: Date.now() })
    }
  })

/** Every stream receives a hint written after `since`, within 10 s. */
const allReceiveAfter = (streams: ReadonlyArray<Stream>, writes: ReadonlyArray<Write>, since: number) =>
  Effect.forEach(
    streams,
    (stream) =>
      stream.sse.waitFor((events) => {
        const fresh = new Set(writes.filter((w) => w.workspace === stream.workspace && w.at > since).map((w) => w.id))
        return events.some((event) => fresh.has(hintId(event) ?? ""))
      }, "10 seconds"),
    { concurrency: "unbounded", discard: true }
  )

/** Streams of an instance that lost its subscription after `since` all got a `resync` after it. */
const resyncedAfter = (stream: Stream, since: number) =>
  Effect.map(Effect.all([stream.sse.events, stream.sse.arrivedAt]), ([events, at]) =>
    events.some((event, i) => isResubscribed(event) && (at[i] ?? 0) > since)
  )

/** Waits (10 s at most) for that `resync`: it goes out when the outage ends, once a probe round has come back. */
const awaitResyncedAfter = (stream: Stream, since: number) =>
  Effect.repeat(resyncedAfter(stream, since), { until: (ok) => ok, schedule: Schedule.spaced("50 millis") }).pipe(
    Effect.timeoutOrElse({ duration: "10 seconds", orElse: () => Effect.succeed(false) })
  )

const lastOutage = (bus: Context.Service.Shape<typeof BroadcastBus>) => Effect.map(bus.status, (s) => s)

/**
 * The bus's status once it says it is subscribed again (15 s at most, then as it is): streams can receive hints
 * again before the probe round that ends the outage has come back, so reading the status at once is a race.
 */
const subscribedAgain = (bus: Context.Service.Shape<typeof BroadcastBus>) =>
  Effect.repeat(bus.status, { until: (status) => status.subscribed, schedule: Schedule.spaced("50 millis") }).pipe(
    Effect.timeoutOrElse({ duration: "15 seconds", orElse: () => bus.status })
  )

describe("fault 8: broadcast on a Redis Cluster", () => {
  it.live(
    "a killed master and a migrated slot: every stream receives again within 10 s of a healthy cluster, and every hint it missed is followed by a resync",
    () =>
      Effect.gen(function* () {
        const startedAt = Date.now()
        const cluster: OwnRedisCluster = yield* ownRedisCluster
        const clusterUpMs = Date.now() - startedAt
        const overrides = { redisUrl: Option.none(), redisClusterNodes: Option.some(clusterNodesOf(cluster)) }
        const a = yield* Layer.build(testApp(overrides))
        const b = yield* Layer.build(testApp(overrides))
        const busA = Context.get(a, BroadcastBus)
        const busB = Context.get(b, BroadcastBus)
        const baseA = yield* Effect.provide(baseUrl, a)
        const baseB = yield* Effect.provide(baseUrl, b)

        // Five workspaces, a member signed in on both instances, 5 streams per workspace on each: 50 streams.
        const streams: Array<Stream> = []
        const writers: Array<{
          readonly workspace: Workspace
          readonly clients: ReadonlyArray<ReturnType<typeof clientFor>>
        }> = []
        for (let w = 0; w < workspaces; w++) {
          const workspace = yield* Effect.provide(freshWorkspace, a)
          const member = yield* Effect.provide(signedInMember(baseA, workspace), a)
          const cookieB = yield* signIn(baseB, {
            workspace: workspace.slug,
            email: member.user.email,
            password: testPassword
          })
          writers.push({ workspace, clients: [member.client, clientFor(baseB, cookieB)] })
          for (let s = 0; s < streamsPerWorkspacePerInstance; s++) {
            streams.push({
              workspace: workspace.id,
              instance: "a",
              sse: yield* openSse(`${baseA}/api/broadcast`, { cookie: member.cookie })
            })
            streams.push({
              workspace: workspace.id,
              instance: "b",
              sse: yield* openSse(`${baseB}/api/broadcast`, { cookie: cookieB })
            })
          }
        }
        expect(streams.every((s) => s.sse.status === 200)).toBe(true)
        expect(streams).toHaveLength(50)

        const writes: Array<Write> = []
        // Two writers per workspace, one on each instance.
        const running = yield* Effect.forEach(
          writers.flatMap(({ clients, workspace }) => clients.map((client) => ({ client, workspace }))),
          ({ client, workspace }) => Effect.forkScoped(writer(workspace.id, [client], writes))
        )
        yield* allReceiveAfter(streams, writes, 0)

        // The hot workspace is the first; its partition's slot and the master serving it.
        const hot = writers[0]!.workspace.id
        const hotSlot = keySlot(partitionChannels("")[partitionOf(hot)]!)

        // (a) SIGKILL the master serving the hot partition; its replica takes over.
        const beforeKill = [yield* lastOutage(busA), yield* lastOutage(busB)] as const
        const victim = yield* cluster.ownerOf(hotSlot)
        const killedAt = yield* now
        yield* cluster.kill(victim.port)
        yield* cluster.awaitHealthy("60 seconds")
        const healthyAfterKill = yield* now
        yield* allReceiveAfter(streams, writes, healthyAfterKill)
        const receivingAfterKill = yield* now
        const afterKill = [yield* subscribedAgain(busA), yield* subscribedAgain(busB)] as const
        for (const [i, status] of afterKill.entries()) {
          expect(status.subscribed).toBe(true)
          expect(status.outages).toBeGreaterThan(beforeKill[i]!.outages)
        }
        for (const stream of streams) expect(yield* awaitResyncedAfter(stream, killedAt)).toBe(true)

        // (b) Move the hot partition's slot to another master (CLUSTER SETSLOT / MIGRATE), under the same load.
        const masters = (yield* cluster.members).filter((m) => m.role === "master" && !m.failed && m.slots.length > 0)
        const owner = yield* cluster.ownerOf(hotSlot)
        const target = masters.find((m) => m.port !== owner.port)!
        const beforeMove = [yield* busA.status, yield* busB.status] as const
        const movedAt = yield* now
        yield* cluster.migrateSlot(hotSlot, target.port)
        yield* cluster.awaitHealthy("60 seconds")
        const healthyAfterMove = yield* now
        expect((yield* cluster.ownerOf(hotSlot)).port).toBe(target.port)
        yield* allReceiveAfter(streams, writes, healthyAfterMove)
        const receivingAfterMove = yield* now
        const afterMove = [yield* busA.status, yield* busB.status] as const
        const movedOutages = afterMove.map((status, i) => status.outages - beforeMove[i]!.outages)
        for (const [i, stream] of streams.entries()) {
          if (movedOutages[stream.instance === "a" ? 0 : 1]! > 0)
            expect(yield* awaitResyncedAfter(stream, movedAt), `stream ${i}`).toBe(true)
        }

        // Quiet: stop the writers, then one last save per workspace reaches every one of its streams.
        yield* Fiber.interruptAll(running)
        for (const { clients, workspace } of writers) {
          const last = yield* createRecord(clients[0]!, deal, { title: "last" })
          writes.push({ workspace: workspace.id, id: last.id, at: Date.now() })
          for (const stream of streams.filter((s) => s.workspace === workspace.id))
            yield* awaitHint(stream.sse, last.id)
        }

        // Every hint a stream missed is followed by a resync on that stream.
        let missed = 0
        let uncovered = 0
        const lostHints = new Set<string>()
        for (const stream of streams) {
          const [events, at] = yield* Effect.all([stream.sse.events, stream.sse.arrivedAt])
          const received = new Set(events.map(hintId))
          const resyncs = events.flatMap((event, i) => (isResubscribed(event) ? [at[i] ?? 0] : []))
          for (const write of writes.filter((w) => w.workspace === stream.workspace)) {
            if (received.has(write.id)) continue
            missed++
            lostHints.add(write.id)
            if (!resyncs.some((t) => t > write.at)) uncovered++
          }
        }
        const figures = {
          clusterUpMs,
          streams: streams.length,
          writes: writes.length,
          kill: {
            healthyAfterMs: healthyAfterKill - killedAt,
            receivingAfterHealthyMs: receivingAfterKill - healthyAfterKill,
            outageMs: { a: afterKill[0].lastOutageMs, b: afterKill[1].lastOutageMs },
            droppedPublishes: {
              a: afterKill[0].droppedPublishes - beforeKill[0].droppedPublishes,
              b: afterKill[1].droppedPublishes - beforeKill[1].droppedPublishes
            }
          },
          migration: {
            healthyAfterMs: healthyAfterMove - movedAt,
            receivingAfterHealthyMs: receivingAfterMove - healthyAfterMove,
            outages: { a: movedOutages[0], b: movedOutages[1] },
            outageMs: { a: afterMove[0].lastOutageMs, b: afterMove[1].lastOutageMs }
          },
          hintsLost: { distinct: lostHints.size, streamDeliveries: missed, notFollowedByResync: uncovered }
        }
        console.log(`fault 8 (redis cluster): ${JSON.stringify(figures, null, 2)}`)
        expect(uncovered).toBe(0)
      }).pipe(Effect.scoped),
    { timeout: 240_000 }
  )
})
