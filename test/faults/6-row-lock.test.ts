import { SqlClient } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, Redacted } from "effect"
import { send } from "./support/recorder"
import type { Exchange } from "./support/recorder"
import { failures, runScenario } from "./support/scenario"
import { headersOf, timelinePath } from "./support/traffic"

const lockMs = 5_000
const budgetMs = 100

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0
    ? null
    : Math.round(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0)
}

describe("fault 6: an outside row lock on one record", () => {
  it.live(
    `a row held FOR UPDATE for ${lockMs / 1000} s by another connection: reads of other records and readiness answer within ${budgetMs} ms each`,
    () =>
      Effect.gen(function* () {
        const result = yield* runScenario({
          id: "6-row-lock",
          title: `Outside row lock (FOR UPDATE) on one record for ${lockMs / 1000} s; unrelated reads within ${budgetMs} ms`,
          writers: 16,
          sharedRecords: 4,
          createShare: 0.1,
          sessions: 2,
          cookieWriters: 2,
          killsService: false,
          // Half the writers queue on the locked record, the others write elsewhere.
          pickRecord: (records) => (writer) =>
            writer % 2 === 0
              ? (records[0] ?? "")
              : (records[1 + Math.floor(Math.random() * (records.length - 1))] ?? ""),
          fault: (ctx) =>
            Effect.gen(function* () {
              const [locked, ...others] = ctx.records
              if (locked === undefined || others.length === 0)
                return yield* Effect.fail(new Error("no records to lock"))
              yield* Effect.sleep("2 seconds")

              const held = yield* Deferred.make<void>()
              const holder = yield* Effect.fork(
                Effect.gen(function* () {
                  const sql = yield* SqlClient.SqlClient
                  yield* sql.withTransaction(
                    Effect.gen(function* () {
                      yield* sql`SELECT id FROM ${sql(`ws_${ctx.tenant.workspace}.records`)} WHERE id = ${locked} FOR UPDATE`
                      yield* Deferred.succeed(held, undefined)
                      yield* Effect.sleep(lockMs)
                    })
                  )
                }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(ctx.pg.url("app")), maxConnections: 1 })))
              )
              yield* Deferred.await(held).pipe(Effect.timeout("10 seconds"))
              const lockedAt = ctx.recorder.now()

              // One read at a time while the lock is held: another record, its timeline page, readiness.
              const measured: Array<Exchange> = []
              const headers = headersOf(ctx.apiKey)
              let round = 0
              while (ctx.recorder.now() - lockedAt < lockMs - 300) {
                const other = others[round++ % others.length] ?? ""
                measured.push(
                  yield* send(ctx.recorder, ctx.service.base, `/api/records/crm/deal/${other}`, {
                    kind: "read",
                    headers
                  })
                )
                measured.push(
                  yield* send(ctx.recorder, ctx.service.base, `${timelinePath(other)}?limit=10`, {
                    kind: "read",
                    headers
                  })
                )
                measured.push(yield* send(ctx.recorder, ctx.service.base, "/api/health/ready", { kind: "probe" }))
              }
              yield* Fiber.join(holder)
              ctx.faultEnded()
              yield* Effect.sleep("3 seconds")

              const stats = (label: string, list: ReadonlyArray<Exchange>) => {
                const ms = list.map((e) => e.endedAt - e.startedAt)
                const slow = ms.filter((m) => m > budgetMs).length
                const notOk = list.filter((e) => e.status !== 200).length
                ctx.metric(`latency while locked: ${label} (ms)`, {
                  count: ms.length,
                  p50: percentile(ms, 50),
                  p95: percentile(ms, 95),
                  max: percentile(ms, 100),
                  [`over ${budgetMs} ms`]: slow,
                  "not 200": notOk
                })
                ctx.check(
                  `${label} answered 200 within ${budgetMs} ms each while the row is locked`,
                  list.length > 0 && slow === 0 && notOk === 0,
                  `${slow} of ${ms.length} over ${budgetMs} ms (max ${String(percentile(ms, 100))} ms, p95 ${String(percentile(ms, 95))} ms); ${notOk} not 200 (${[...new Set(list.map((e) => e.status))].join(", ")})`
                )
              }
              stats(
                "reads of other records",
                measured.filter((e) => e.kind === "read")
              )
              stats(
                "GET /api/health/ready",
                measured.filter((e) => e.kind === "probe")
              )
              const lockedWrites = ctx.traffic.writes.filter((w) => w.recordId === locked && w.writer >= 0)
              ctx.metric("writes to the locked record", {
                logical: lockedWrites.length,
                "answered 503 while locked": lockedWrites.flatMap((w) => w.attempts).filter((a) => a.status === 503)
                  .length
              })
            })
        })
        expect(failures(result)).toEqual([])
      }),
    240_000
  )
})
