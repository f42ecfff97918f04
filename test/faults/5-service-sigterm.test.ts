import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option, Ref, Schema } from "effect"
import { StoredRecord } from "../../src/api/StoredRecord"
import { RecordList } from "../../src/api/RecordsApi"
import { waitUntil } from "./support/processes"
import { isOk, send } from "./support/recorder"
import type { Exchange } from "./support/recorder"
import { failures, runScenario } from "./support/scenario"
import { allOpen, openStreams } from "./support/streams"
import { dealPath, headersOf } from "./support/traffic"

const drainMs = 5_000
const streamCount = 4
const jobCount = 12

const decodeRecord = Schema.decodeUnknownOption(StoredRecord)
const decodeList = Schema.decodeUnknownOption(RecordList)

const idOf = (body: unknown) => Option.getOrUndefined(Option.map(decodeRecord(body), (record) => record.id))

/** The subjects of a `GET /api/records/crm/activity` answer. */
const subjectsOf = (body: unknown): ReadonlyArray<string> =>
  Option.match(decodeList(body), {
    onNone: () => [],
    onSome: (list) =>
      list.records.flatMap((record) => (typeof record.values.subject === "string" ? [record.values.subject] : []))
  })

describe("fault 5: SIGTERM under load", () => {
  it.live(
    "SIGTERM while writes, reads, streams and jobs are under way: every in-flight request answered, streams ended, jobs kept, exit 0 within the drain",
    () =>
      Effect.gen(function* () {
        const result = yield* runScenario({
          id: "5-service-sigterm",
          title: `SIGTERM under load (DRAIN_TIMEOUT_MS=${drainMs}), ${streamCount} open SSE streams`,
          writers: 16,
          sharedRecords: 4,
          createShare: 0.3,
          sessions: 2,
          cookieWriters: 2,
          killsService: true,
          recoveryBoundMs: 60_000,
          serviceEnv: { DRAIN_TIMEOUT_MS: String(drainMs) },
          fault: (ctx) =>
            Effect.gen(function* () {
              const streams = yield* openStreams(ctx.recorder, ctx.service.base, ctx.cookies, streamCount, {
                reopen: false
              })
              yield* Effect.addFinalizer(() => streams.close)
              yield* waitUntil(
                `${streamCount} broadcast streams open`,
                Effect.sync(() => allOpen(streams)),
                "20 seconds"
              )
              yield* Effect.sleep("4 seconds")

              // Background jobs enqueued just before the signal: each must finish before the exit or run after the restart.
              const headers = headersOf(ctx.apiKey)
              const jobDeals = yield* Effect.forEach(
                Array.from({ length: jobCount }, (_, i) => `job-${i}`),
                (title) =>
                  Effect.map(
                    send(ctx.recorder, ctx.service.base, dealPath, {
                      kind: "setup",
                      method: "POST",
                      headers,
                      json: { values: { title, stage: "open" } }
                    }),
                    (e) => ({ title, id: idOf(e.body) })
                  )
              )
              const followUps = yield* Effect.forEach(
                jobDeals.filter((d) => d.id !== undefined),
                (deal) =>
                  Effect.map(
                    send(ctx.recorder, ctx.service.base, "/api/actions/crm/deal/follow-up", {
                      kind: "setup",
                      method: "POST",
                      headers,
                      json: { id: deal.id }
                    }),
                    (e) => ({ ...deal, enqueued: isOk(e) })
                  ),
                { concurrency: "unbounded" }
              )

              const service = yield* ctx.service.process
              const termAt = ctx.recorder.now()
              yield* service.signal("SIGTERM")
              // Readiness, asked every 100 ms until the process is gone.
              const probes = yield* Ref.make<ReadonlyArray<Exchange>>([])
              const prober = yield* Effect.forkChild(
                Effect.forever(
                  Effect.andThen(
                    Effect.flatMap(
                      send(ctx.recorder, ctx.service.base, "/api/health/ready", { kind: "probe", timeoutMs: 2000 }),
                      (e) => Ref.update(probes, (all) => [...all, e])
                    ),
                    Effect.sleep("100 millis")
                  )
                )
              )
              const exit = yield* service.awaitExit(drainMs + 10_000)
              const exitedAt = ctx.recorder.now()
              yield* Fiber.interrupt(prober)
              ctx.faultEnded()
              const startupMs = yield* ctx.service.start
              ctx.metric("restart until ready (ms)", startupMs)
              yield* Effect.sleep("3 seconds")

              const enqueued = followUps.filter((f) => f.enqueued)
              const activities = send(ctx.recorder, ctx.service.base, "/api/records/crm/activity?limit=500", {
                kind: "setup",
                headers
              }).pipe(Effect.map((e) => subjectsOf(e.body)))
              const done = (subjects: ReadonlyArray<string>) =>
                enqueued.filter((f) => subjects.includes(`Follow up on ${f.title}`)).length
              yield* waitUntil(
                "every follow-up job has run",
                Effect.map(activities, (subjects) => done(subjects) === enqueued.length),
                "30 seconds",
                "250 millis"
              ).pipe(Effect.ignore)
              const subjects = yield* activities
              ctx.metric("background jobs enqueued before SIGTERM", {
                enqueued: enqueued.length,
                ran: done(subjects),
                "ran more than once": enqueued.filter(
                  (f) => subjects.filter((s) => s === `Follow up on ${f.title}`).length > 1
                ).length
              })
              ctx.check(
                "every job enqueued before SIGTERM finishes (before the exit, or after the restart from the queue)",
                enqueued.length === jobCount && done(subjects) === enqueued.length,
                `${done(subjects)} of ${enqueued.length} enqueued follow-up jobs left their activity (${jobCount} asked)`
              )

              const elapsed = Math.round(exitedAt - termAt)
              ctx.metric("exit", {
                code: exit?.code ?? null,
                signal: exit?.signal ?? null,
                "ms after SIGTERM": exit === undefined ? null : elapsed
              })
              ctx.check(
                `exit code 0 within the drain (${drainMs} ms + 1 s)`,
                exit !== undefined && exit.code === 0 && elapsed <= drainMs + 1000,
                exit === undefined
                  ? `still running ${drainMs + 10_000} ms after SIGTERM`
                  : `exit code ${String(exit.code)}${exit.signal ? ` (signal ${exit.signal})` : ""} after ${elapsed} ms`
              )
              const inFlight = ctx.recorder.exchanges.filter(
                (e) => e.kind !== "probe" && e.startedAt < termAt && e.endedAt >= termAt
              )
              const unanswered = inFlight.filter((e) => e.status === undefined)
              ctx.metric("requests in flight at SIGTERM", inFlight.length)
              ctx.check(
                "every request in flight at SIGTERM is answered",
                unanswered.length === 0,
                `${unanswered.length} of ${inFlight.length} got no HTTP answer${
                  unanswered.length > 0
                    ? ` (e.g. ${unanswered
                        .slice(0, 2)
                        .map((e) => `${e.method} ${e.path.split("?")[0]}: ${e.error ?? ""}`)
                        .join("; ")})`
                    : ""
                }`
              )
              const asked = (yield* Ref.get(probes)).filter((e) => e.startedAt >= termAt + 50)
              const readyAfterTerm = asked.filter((e) => e.status === 200)
              ctx.metric("readiness after SIGTERM", {
                asked: asked.length,
                "503": asked.filter((e) => e.status === 503).length,
                "200": readyAfterTerm.length,
                "no answer": asked.filter((e) => e.status === undefined).length,
                other: asked
                  .filter((e) => e.status !== undefined && e.status !== 200 && e.status !== 503)
                  .map((e) => e.status)
              })
              ctx.check(
                "readiness is never 200 once SIGTERM arrived",
                readyAfterTerm.length === 0 && asked.every((e) => e.status === undefined || e.status === 503),
                `${readyAfterTerm.length} of ${asked.length} probes answered 200; ${asked.filter((e) => e.status !== undefined && e.status !== 200 && e.status !== 503).length} answered neither 200 nor 503`
              )
              const endedWell = streams.clients.filter((c) => {
                const connection = c.connections[0]
                const last = c.events[c.events.length - 1]
                return (
                  connection !== undefined &&
                  connection.endedBy === "server ended the stream" &&
                  connection.endedAt !== undefined &&
                  connection.endedAt <= exitedAt &&
                  last !== undefined &&
                  last.at >= termAt &&
                  last.event !== "changed" &&
                  last.event !== "presence"
                )
              })
              ctx.check(
                "every open stream ends with a final event before the exit",
                endedWell.length === streamCount,
                `${endedWell.length} of ${streamCount} streams were ended by the server before the exit with a last event (not changed/presence) after SIGTERM; ${streams.clients
                  .map(
                    (c) =>
                      `${c.connections[0]?.endedBy ?? "open"} (${
                        c.events
                          .filter((e) => e.at >= termAt)
                          .map((e) => e.event)
                          .join(",") || "no event"
                      })`
                  )
                  .join("; ")}`
              )
            })
        })
        expect(failures(result)).toEqual([])
      }),
    240_000
  )
})
