import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { failures, runScenario } from "./support/scenario"

describe("fault 4: the service killed (SIGKILL) and started again", () => {
  it.live(
    "SIGKILL under writes, then a restart: acknowledged writes durable, writes retried with their Idempotency-Key committed once",
    () =>
      Effect.gen(function* () {
        const result = yield* runScenario({
          id: "4-service-sigkill",
          title:
            "SIGKILL the service under writes and start it again; writers retry unanswered writes with their Idempotency-Key",
          writers: 16,
          sharedRecords: 4,
          createShare: 0.5,
          sessions: 2,
          cookieWriters: 2,
          killsService: true,
          recoveryBoundMs: 60_000,
          fault: (ctx) =>
            Effect.gen(function* () {
              yield* Effect.sleep("4 seconds")
              const service = yield* ctx.service.process
              const killedAt = ctx.recorder.now()
              yield* service.signal("SIGKILL")
              const exit = yield* service.awaitExit("10 seconds")
              if (exit === undefined)
                return yield* Effect.fail(new Error("the service did not die within 10 s of SIGKILL"))
              ctx.faultEnded()
              const startupMs = yield* ctx.service.start
              ctx.metric("restart until ready (ms)", startupMs)
              yield* Effect.sleep("5 seconds")
              const cut = ctx.recorder.exchanges.filter(
                (e) => e.startedAt < killedAt && e.endedAt >= killedAt && e.status === undefined
              )
              ctx.metric("requests cut by the kill", cut.length)
              const retried = ctx.traffic.writes.filter(
                (w) => w.attempts.length > 1 && w.attempts.some((a) => a.status === undefined)
              )
              ctx.metric("writes retried after no answer", retried.length)
            })
        })
        expect(failures(result)).toEqual([])
      }),
    240_000
  )
})
