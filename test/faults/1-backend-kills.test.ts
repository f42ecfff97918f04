import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { failures, runScenario } from "./support/scenario"

describe("fault 1: backend connections killed during writes", () => {
  it.live(
    "pg_terminate_backend of the service's backends every 1-2 s: no 500, acknowledged writes durable, timelines replay, reader misses nothing",
    () =>
      Effect.gen(function* () {
        const result = yield* runScenario({
          id: "1-backend-kills",
          title: "pg_terminate_backend of every service backend every 1-2 s during writes",
          writers: 16,
          sharedRecords: 4,
          createShare: 0.15,
          sessions: 2,
          cookieWriters: 2,
          killsService: false,
          fault: (ctx) =>
            Effect.gen(function* () {
              yield* Effect.sleep("3 seconds")
              let rounds = 0
              let terminated = 0
              while (rounds < 8) {
                const count = yield* ctx.pg.psql(
                  "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE datname = 'app' AND pid <> pg_backend_pid()"
                )
                rounds++
                terminated += Number(count)
                ctx.faultEnded()
                yield* Effect.sleep(1000 + Math.floor(Math.random() * 1000))
              }
              ctx.metric("backend kills", { rounds, "backends terminated": terminated })
              yield* Effect.sleep("2 seconds")
            })
        })
        expect(failures(result)).toEqual([])
      }),
    240_000
  )
})
