import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { waitUntil } from "./support/processes"
import { isOk, send } from "./support/recorder"
import { failures, runScenario } from "./support/scenario"
import { allOpen, openStreams } from "./support/streams"

const streamCount = 30

describe("fault 3: Redis restarted during writes with open broadcast streams", () => {
  it.live(
    `Redis killed and started again under writes with ${streamCount} SSE streams: writes keep succeeding, streams get hints again`,
    () =>
      Effect.gen(function* () {
        const result = yield* runScenario({
          id: "3-redis-restart",
          title: `Redis restart during writes with ${streamCount} open SSE streams`,
          writers: 16,
          sharedRecords: 4,
          createShare: 0.15,
          sessions: 6,
          cookieWriters: 2,
          killsService: false,
          fault: (ctx) =>
            Effect.gen(function* () {
              const streams = yield* openStreams(ctx.recorder, ctx.service.base, ctx.cookies, streamCount)
              yield* Effect.addFinalizer(() => streams.close)
              yield* waitUntil(
                `${streamCount} broadcast streams open`,
                Effect.sync(() => allOpen(streams)),
                "20 seconds"
              )
              yield* Effect.sleep("3 seconds")

              const down = ctx.recorder.now()
              yield* ctx.redis.kill
              yield* Effect.sleep("1 second")
              const ready = yield* send(ctx.recorder, ctx.service.base, "/api/health/ready", {
                kind: "probe",
                timeoutMs: 5000
              })
              yield* Effect.sleep("1 second")
              yield* ctx.redis.start
              const back = ctx.recorder.now()
              ctx.faultEnded()

              const hintedAfter = (since: number) =>
                streams.clients.filter((c) => c.events.some((e) => e.event === "changed" && e.at > since)).length
              // Every stream (the same connection, or the one its client reopened) gets hints again.
              yield* waitUntil(
                "every stream receives a changed hint after Redis is back",
                Effect.sync(() => hintedAfter(back) === streamCount),
                "20 seconds",
                "100 millis"
              ).pipe(Effect.ignore)
              const resumedAt = ctx.recorder.now()
              yield* Effect.sleep("2 seconds")
              yield* streams.close

              const events = streams.clients.flatMap((c) => c.events)
              const changed = events.filter((e) => e.event === "changed")
              const writesDuringOutage = ctx.recorder.exchanges.filter(
                (e) => (e.kind === "create" || e.kind === "update") && e.startedAt >= down && e.startedAt < back
              )
              const firstAfter = streams.clients.map(
                (c) => c.events.find((e) => e.event === "changed" && e.at > back)?.at
              )
              ctx.metric("hints received", {
                "before the outage": changed.filter((e) => e.at < down).length,
                "during the outage": changed.filter((e) => e.at >= down && e.at < back).length,
                "after Redis is back": changed.filter((e) => e.at >= back).length
              })
              ctx.metric(
                "stream reopens",
                streams.clients.reduce((n, c) => n + c.connections.length - 1, 0)
              )
              ctx.metric(
                "resync events after Redis is back",
                events.filter((e) => e.event === "resync" && e.at >= back).length
              )
              // Whatever was missed meanwhile is re-read: the open stream gets `resync` (resubscribed), a reopened one its first.
              const resynced = streams.clients.filter((c) =>
                c.events.some((e) => e.event === "resync" && e.at >= back)
              ).length
              ctx.check(
                "every stream gets a resync after Redis is back",
                resynced === streamCount,
                `${resynced} of ${streamCount} streams got a resync after Redis was back`
              )
              ctx.metric(
                "streams resumed (ms after Redis is back, max)",
                firstAfter.every((at) => at !== undefined)
                  ? Math.round(Math.max(...firstAfter.map((at) => (at ?? 0) - back)))
                  : null
              )
              ctx.check(
                "every stream gets changed hints again after the restart",
                hintedAfter(back) === streamCount,
                `${hintedAfter(back)} of ${streamCount} streams got a changed hint within ${Math.round(resumedAt - back)} ms of Redis being back`
              )
              const opens = streams.clients.flatMap((c) => c.connections)
              const badOpens = opens.filter((c) => c.status !== undefined && c.status >= 500 && c.status !== 503)
              ctx.metric(
                "stream opens by status",
                Object.fromEntries(
                  [...new Set(opens.map((c) => String(c.status ?? "none")))].map((s) => [
                    s,
                    opens.filter((c) => String(c.status ?? "none") === s).length
                  ])
                )
              )
              ctx.check(
                "no stream open answered 500 (503 while Redis is down is fine)",
                badOpens.length === 0,
                `${badOpens.length} of ${opens.length} opens answered ${[...new Set(badOpens.map((c) => c.status))].join(", ") || "no 5xx but 503"}`
              )
              ctx.check(
                "streams had hints before the outage",
                streams.clients.every((c) => c.events.some((e) => e.event === "changed" && e.at < down)),
                `${streams.clients.filter((c) => c.events.some((e) => e.event === "changed" && e.at < down)).length} of ${streamCount} streams`
              )
              const okDuring = writesDuringOutage.filter(isOk).length
              ctx.check(
                "writes keep succeeding while Redis is down",
                writesDuringOutage.length > 0 && okDuring === writesDuringOutage.length,
                `${okDuring} of ${writesDuringOutage.length} writes sent during the outage answered 2xx`
              )
              ctx.check(
                "ready while Redis is down (degraded, not unready)",
                ready.status === 200,
                `GET /api/health/ready answered ${String(ready.status ?? "nothing")} in ${Math.round(ready.endedAt - ready.startedAt)} ms: ${JSON.stringify(ready.body).slice(0, 160)}`
              )
            })
        })
        expect(failures(result)).toEqual([])
      }),
    240_000
  )
})
