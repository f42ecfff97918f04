import { expect, layer } from "@effect/vitest"
import { Duration, Effect, Schema } from "effect"
import { Resync } from "../../src/api/Broadcast"
import { Sessions } from "../../src/auth/Sessions"
import { AppConfig } from "../../src/config/AppConfig"
import { presenceIntervals } from "../../src/presence/Presence"
import { baseUrl, freshWorkspace, testApp } from "../support/TestApp"
import { createRecord, signedInMember } from "../support/api"
import { openSse } from "../support/sse"
import { awaitHint, ended, opened, probe } from "./streamHelpers"

const deal = "crm/deal"
const streamCount = 50

/** `: connected`, then the first event: `retry:` and `resync` in one block. */
const firstEvent = /^: connected\n\nretry: (\d+)\nevent: resync\ndata: (.*)\n\n/

const decodeResync = Schema.decodeUnknownSync(Schema.fromJsonString(Resync))

layer(testApp({ presenceHeartbeat: Duration.millis(4_000), maxStreamsPerSession: streamCount }), {
  excludeTestServices: true
})("the stream's contract: resync first, retry with jitter", (it) => {
  it.effect(
    `${streamCount} streams each open with resync (reason open, the served presence intervals) carrying a retry drawn per stream from 1-5 s`,
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const config = yield* AppConfig
        const workspace = yield* freshWorkspace
        const { client, cookie } = yield* signedInMember(base, workspace)
        const streams = yield* Effect.forEach(
          Array.from({ length: streamCount }),
          () => openSse(`${base}/api/broadcast`, { cookie }),
          { concurrency: 10 }
        )
        const retries: Array<number> = []
        for (const stream of streams) {
          expect(stream.status).toBe(200)
          yield* stream.waitFor((events) => events.length >= 1)
          const match = firstEvent.exec(yield* stream.raw)
          expect(match, "the stream's first bytes").not.toBeNull()
          retries.push(Number(match?.[1]))
          // The data is the contract's schema, with the intervals the presence service applies.
          expect(decodeResync(match?.[2])).toEqual({
            reason: "open",
            presence: { heartbeatMs: 4_000, lapseMs: 12_000 }
          })
          expect(decodeResync(match?.[2]).presence).toEqual(presenceIntervals(config.presenceHeartbeat))
        }
        // Each within STREAM_RETRY_MIN_MS..STREAM_RETRY_MAX_MS (1-5 s by default), and spread over at least 2 s.
        for (const retry of retries) {
          expect(retry).toBeGreaterThanOrEqual(1_000)
          expect(retry).toBeLessThanOrEqual(5_000)
        }
        expect(Math.max(...retries) - Math.min(...retries)).toBeGreaterThanOrEqual(2_000)
        console.log(
          `retry of ${streamCount} streams (ms): min ${Math.min(...retries)}, max ${Math.max(...retries)}, distinct ${new Set(retries).size}`
        )

        // Hints follow the resync.
        const record = yield* createRecord(client, deal, { title: "After the resync" })
        const [stream] = streams
        if (stream === undefined) throw new Error("no stream")
        expect((yield* awaitHint(stream, record.id)).map((event) => event.event)).toEqual(["resync", "changed"])
      })
  )

  it.effect(
    "a stream ends at its session's end: event end, reason session-expired, then the connection closes; the reconnect is 401",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { user } = yield* signedInMember(base, workspace)
        const token = yield* (yield* Sessions).start(user.id, workspace.id, Duration.millis(1_500))
        const cookie = `session=${token}`
        const stream = yield* openSse(`${base}/api/broadcast`, { cookie })
        expect(stream.status).toBe(200)
        yield* stream.ended
        expect(yield* stream.events).toEqual([
          { ...opened, data: { reason: "open", presence: { heartbeatMs: 4_000, lapseMs: 12_000 } } },
          ended("session-expired")
        ])
        expect((yield* probe(`${base}/api/broadcast`, { cookie })).status).toBe(401)
      }).pipe(Effect.provide(Sessions.layer))
  )
})

layer(testApp({ streamMaxLifetime: Duration.millis(500) }), { excludeTestServices: true })(
  "STREAM_MAX_LIFETIME_MS",
  (it) => {
    it.effect(
      "a stream ends after its lifetime (±10%) with event end, reason lifetime, and closes; a new stream opens as before",
      () =>
        Effect.gen(function* () {
          const base = yield* baseUrl
          const workspace = yield* freshWorkspace
          const { cookie } = yield* signedInMember(base, workspace)
          const stream = yield* openSse(`${base}/api/broadcast`, { cookie })
          expect(stream.status).toBe(200)
          yield* stream.ended
          expect(yield* stream.events).toEqual([opened, ended("lifetime")])
          expect(yield* stream.raw).toMatch(/event: end\ndata: \{"reason":"lifetime"\}\n\n$/)

          const next = yield* openSse(`${base}/api/broadcast`, { cookie })
          expect(next.status).toBe(200)
          yield* next.ended
          expect((yield* next.events).at(-1)).toEqual(ended("lifetime"))
        })
    )
  }
)
