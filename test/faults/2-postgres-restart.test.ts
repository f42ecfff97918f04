import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { failures, runScenario } from "./support/scenario"

describe("fault 2: PostgreSQL restarted during writes", () => {
  it.live(
    "pg_ctl restart -m fast under writes: no 500, acknowledged writes durable, timelines replay, the service recovers",
    () =>
      Effect.gen(function* () {
        const result = yield* runScenario({
          id: "2-postgres-restart",
          title: "PostgreSQL fast restart (pg_ctl restart -m fast) during writes",
          writers: 16,
          sharedRecords: 4,
          createShare: 0.15,
          sessions: 2,
          cookieWriters: 2,
          killsService: false,
          fault: (ctx) =>
            Effect.gen(function* () {
              yield* Effect.sleep("4 seconds")
              const began = ctx.recorder.now()
              yield* ctx.pg.restartFast
              ctx.metric("restart took (ms)", Math.round(ctx.recorder.now() - began))
              ctx.faultEnded()
              yield* Effect.sleep("8 seconds")
            })
        })
        expect(failures(result)).toEqual([])
      }),
    240_000
  )
})
