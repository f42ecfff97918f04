import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { meaningfulLines, runProcess } from "../support/subprocess"

describe("configuration checked at start", () => {
  it.live(
    "every wrong value is one line naming its variable, exit code 1, no stack trace, no secret printed",
    () =>
      Effect.gen(function* () {
        const result = yield* runProcess("node", ["--import", "tsx", "src/main.ts"], {
          PORT: "abc",
          DATABASE_URL: "mysql://admin:hunter2-secret@db.example/app",
          DATABASE_LOCK_TIMEOUT_MS: "-5",
          REDIS_URL: "nonsense",
          LOG_LEVEL: "loud",
          HOST: undefined
        }).pipe(Effect.timeout("90 seconds"))
        expect(result.code).toBe(1)
        expect(meaningfulLines(result.stderr)).toEqual([
          'configuration error: LOG_LEVEL: Expected a log level but received "loud"',
          "configuration error: DATABASE_URL: must be a postgres:// or postgresql:// URL, e.g. postgres://user:pass@host:5432/db",
          "configuration error: DATABASE_LOCK_TIMEOUT_MS: must be a positive number of milliseconds",
          "configuration error: REDIS_URL: must be a redis:// or rediss:// URL, e.g. redis://127.0.0.1:6379",
          'configuration error: PORT: Expected a network port value but received "abc"'
        ])
        expect(result.stderr).not.toContain("hunter2")
        expect(meaningfulLines(result.stdout)).toEqual([])
      }),
    120_000
  )
})
