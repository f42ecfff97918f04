import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Metric, Option, Redacted } from "effect"
import { commitLsnHeader } from "../../src/api/CommitPosition"
import { createClient } from "../../src/client"
import { replicaReads } from "../../src/metrics/ServiceMetrics"
import { clientFor, createRecord, signedInMember } from "../support/api"
import { browserFetch } from "../support/browserFetch"
import { baseUrl, freshWorkspace, testApp, testPassword } from "../support/TestApp"
import { startPostgres } from "./support/postgres"
import { waitUntil } from "./support/processes"
import { startReplica } from "./support/replica"

/**
 * `DATABASE_READ_URL` on a primary and a streaming replica of the test's own
 * (docs/scale-out.md, "Read replicas"), through the service's HTTP API:
 *
 * - without the commit position (plain HTTP, no `X-Commit-LSN`) a read right
 *   after a save does miss it on the replica: the replica is really read, and
 *   really behind, so the next part proves something;
 * - through the typed client, which keeps the position of each answer and
 *   sends it back, 1,000 saves each read back at once (the record, then its
 *   timeline, in turns) are never stale, and most of those reads are served
 *   by the replica;
 * - the replica stopped (immediate shutdown, its pooled connections cut):
 *   saves and reads go on on the primary, not one non-2xx answer, and health
 *   reports the replica down; started again, it serves reads again.
 */

const deal = "crm/deal"
const pairs = 1_000
const unsentPairs = 20
const pairsWithoutReplica = 200

/** How many routed reads went where (the `db_replica_reads_total` counter of this process). */
const routes = Effect.gen(function* () {
  const count = (target: string, route: string) =>
    Effect.map(Metric.value(Metric.withAttributes(replicaReads, { target, route })), (state) => state.count)
  return {
    replica: yield* count("replica", "replica"),
    replayed: yield* count("replica", "replayed"),
    behind: yield* count("primary", "behind"),
    unusable: yield* count("primary", "unusable"),
    fault: yield* count("primary", "fault")
  }
})

const minus = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - (before[key] ?? 0)]))

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0
}

/** The replica's part of `GET /api/health`, as sent. */
const replicaStatus = (base: string) =>
  Effect.map(clientFor(base, "").get("/api/health"), ({ body }) =>
    typeof body === "object" && body !== null && "replica" in body ? JSON.stringify(body.replica) : "none"
  )

describe("fault 10: a read replica", () => {
  it.live(
    "1,000 saves each read back at once through the typed client: none stale (without the position some are); the replica stopped: every read on the primary, no 5xx",
    () =>
      Effect.gen(function* () {
        const primary = yield* startPostgres(["app"])
        const replica = yield* startReplica(primary)
        const app = yield* Layer.build(
          testApp({
            databaseUrl: Option.some(Redacted.make(primary.url("app"))),
            databaseReadUrl: Option.some(Redacted.make(replica.url("app")))
          })
        )
        const base = yield* Effect.provide(baseUrl, app)
        yield* waitUntil(
          "health shows the replica up",
          Effect.map(replicaStatus(base), (status) => status.includes('"status":"up"')),
          "20 seconds"
        )
        const workspace = yield* Effect.provide(freshWorkspace, app)
        const member = yield* Effect.provide(signedInMember(base, workspace), app)
        const record = yield* createRecord(member.client, deal, { title: "pair-start" })
        const recordPath = `/api/records/${deal}/${record.id}`

        // (a) Plain HTTP without the position, the replica's replay paused (it still answers, within its 5 s of
        // allowed lag): a read misses the save just answered. Without the pause whether one does is a race.
        yield* replica.pauseReplay
        let stale = 0
        for (let i = 0; i < unsentPairs; i++) {
          const title = `unsent-${i}`
          const saved = yield* member.client.patch(recordPath, { values: { title } })
          expect(saved.status).toBe(200)
          expect(saved.headers.get(commitLsnHeader)).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/)
          const read = yield* member.client.get(recordPath)
          expect(read.status).toBe(200)
          if (JSON.stringify(read.body).includes(`"${title}"`) === false) stale++
        }
        yield* replica.resumeReplay
        expect(stale, "reads without the position that missed the save just made").toBeGreaterThan(0)

        // (b) The typed client sends the highest position it has seen: 1,000 saves, each read back at once.
        const client = createClient({ baseUrl: base, fetch: browserFetch() })
        yield* Effect.promise(() =>
          client.auth.login({ workspace: workspace.slug, email: member.user.email, password: testPassword })
        )
        const before = yield* routes
        const readMs: Array<number> = []
        let staleWithPosition = 0
        const started = Date.now()
        for (let i = 0; i < pairs; i++) {
          const title = `pair-${i}`
          yield* Effect.promise(() => client.records.update(deal, record.id, { title }))
          const readAt = performance.now()
          const fresh =
            i % 2 === 0
              ? (yield* Effect.promise(() => client.records.get(deal, record.id))).values.title === title
              : JSON.stringify(
                  (yield* Effect.promise(() => client.audit.timeline(deal, record.id, { limit: 1 }))).entries[0]
                    ?.changes ?? {}
                ).includes(`"${title}"`)
          readMs.push(performance.now() - readAt)
          if (!fresh) staleWithPosition++
        }
        const pairsMs = Date.now() - started
        const withPosition = minus(yield* routes, before)
        expect(staleWithPosition).toBe(0)
        // The replica did serve them: without it the test would prove nothing.
        expect((withPosition.replayed ?? 0) + (withPosition.replica ?? 0)).toBeGreaterThan(pairs / 2)

        // (c) The replica stopped: saves and reads go on, on the primary; no answer is an error.
        const beforeStop = yield* routes
        yield* replica.stop
        // At once, before the replica's check has noticed: reads without a position meet its cut connections.
        for (let i = 0; i < 20; i++) expect((yield* member.client.get(recordPath)).status).toBe(200)
        let staleWithoutReplica = 0
        for (let i = 0; i < pairsWithoutReplica; i++) {
          const title = `down-${i}`
          yield* Effect.promise(() => client.records.update(deal, record.id, { title }))
          const read = yield* Effect.promise(() => client.records.get(deal, record.id))
          const page = yield* Effect.promise(() => client.audit.timeline(deal, record.id, { limit: 1 }))
          if (read.values.title !== title || !JSON.stringify(page.entries[0]?.changes ?? {}).includes(`"${title}"`))
            staleWithoutReplica++
        }
        const whileDown = minus(yield* routes, beforeStop)
        expect(staleWithoutReplica).toBe(0)
        expect(whileDown.replica ?? 0).toBe(0)
        expect(whileDown.replayed ?? 0).toBe(0)
        expect((yield* clientFor(base, "").get("/api/health")).status).toBe(200)
        expect(yield* replicaStatus(base)).toContain('"status":"down"')

        // Started again, it serves reads again.
        yield* replica.start
        yield* waitUntil(
          "health shows the replica up again",
          Effect.map(replicaStatus(base), (status) => status.includes('"status":"up"')),
          "20 seconds"
        )
        const beforeBack = yield* routes
        yield* Effect.promise(() => client.records.update(deal, record.id, { title: "back" }))
        expect((yield* Effect.promise(() => client.records.get(deal, record.id))).values.title).toBe("back")
        const back = minus(yield* routes, beforeBack)
        expect((back.replayed ?? 0) + (back.replica ?? 0)).toBeGreaterThan(0)

        console.log(
          JSON.stringify({
            withoutPosition: { pairs: unsentPairs, stale },
            withPosition: {
              pairs,
              stale: staleWithPosition,
              routes: withPosition,
              pairsMs,
              readMs: { p50: percentile(readMs, 50), p99: percentile(readMs, 99), max: percentile(readMs, 100) }
            },
            replicaStopped: { pairs: pairsWithoutReplica, stale: staleWithoutReplica, routes: whileDown }
          })
        )
      }).pipe(Effect.scoped),
    240_000
  )
})
