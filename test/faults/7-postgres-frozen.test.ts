import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { send } from "./support/recorder"
import type { Exchange } from "./support/recorder"
import { failures, runScenario } from "./support/scenario"

const frozenMs = 5_000
/** The bound: readiness answers within 1 s (its probe gives PostgreSQL 750 ms). */
const readyBoundMs = 1_000

describe("fault 7: PostgreSQL frozen (SIGSTOP) and woken (SIGCONT)", () => {
  it.live(
    `the postmaster and its children stopped for ${frozenMs / 1000} s: readiness answers 503 within 1 s, the service recovers after CONT`,
    () =>
      Effect.gen(function* () {
        const result = yield* runScenario({
          id: "7-postgres-frozen",
          title: `PostgreSQL frozen (kill -STOP postmaster and children) for ${frozenMs / 1000} s, then -CONT`,
          writers: 16,
          sharedRecords: 4,
          createShare: 0.15,
          sessions: 2,
          cookieWriters: 2,
          killsService: false,
          recoveryBoundMs: 10_000,
          fault: (ctx) =>
            Effect.gen(function* () {
              yield* Effect.sleep("3 seconds")
              const pids = yield* ctx.pg.freeze
              const frozenAt = ctx.recorder.now()
              const probes: Array<Exchange> = []
              yield* Effect.gen(function* () {
                while (ctx.recorder.now() - frozenAt < frozenMs) {
                  probes.push(
                    yield* send(ctx.recorder, ctx.service.base, "/api/health/ready", {
                      kind: "probe",
                      timeoutMs: 10_000
                    })
                  )
                  yield* Effect.sleep("200 millis")
                }
              }).pipe(Effect.ensuring(ctx.pg.thaw(pids)))
              const thawedAt = ctx.recorder.now()
              ctx.faultEnded()
              ctx.metric("processes frozen", pids.length)
              yield* Effect.sleep("6 seconds")

              const during = probes.filter((e) => e.startedAt >= frozenAt + 100 && e.endedAt < thawedAt)
              const ms = during.map((e) => Math.round(e.endedAt - e.startedAt))
              ctx.metric("readiness while frozen", {
                probes: during.length,
                statuses: during.map((e) => e.status ?? "none").join(" "),
                "ms each": ms.join(" ")
              })
              ctx.check(
                `readiness answers within ${readyBoundMs} ms while PostgreSQL is frozen`,
                during.length > 0 && ms.every((m) => m <= readyBoundMs) && during.every((e) => e.status !== undefined),
                `${ms.filter((m) => m > readyBoundMs).length} of ${during.length} probes slower (max ${ms.length > 0 ? Math.max(...ms) : "-"} ms); ${during.filter((e) => e.status === undefined).length} unanswered`
              )
              ctx.check(
                "readiness is 503 while PostgreSQL is frozen",
                during.length > 0 && during.every((e) => e.status === 503),
                `${during.filter((e) => e.status === 503).length} of ${during.length} probes answered 503 (${[...new Set(during.map((e) => e.status ?? "none"))].join(", ")})`
              )
              const readyAfter = yield* send(ctx.recorder, ctx.service.base, "/api/health/ready", {
                kind: "probe",
                timeoutMs: 5000
              })
              ctx.check(
                "ready again after CONT",
                readyAfter.status === 200,
                `GET /api/health/ready answered ${String(readyAfter.status ?? "nothing")} ${Math.round(readyAfter.endedAt - thawedAt)} ms after CONT`
              )
            })
        })
        expect(failures(result)).toEqual([])
      }),
    240_000
  )
})
