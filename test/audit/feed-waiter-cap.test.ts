import { expect, it, layer } from "@effect/vitest"
import { Effect, Result } from "effect"
import { makeFeedWaiterCap } from "../../src/http/FeedWaiterCap"
import { signedInMember } from "../support/api"
import { openSse } from "../support/sse"
import { baseUrl, freshWorkspace, testApp } from "../support/TestApp"

const session = (tokenHash: string) => ({ _tag: "Session" as const, tokenHash })

it.effect("the cap: places per credential up to the cap, then 429; a release is idempotent and frees one", () =>
  Effect.gen(function* () {
    const cap = makeFeedWaiterCap(2)
    const first = yield* cap.take(session("a"))
    yield* cap.take(session("a"))
    const third = yield* Effect.result(cap.take(session("a")))
    expect(Result.isFailure(third) && third.failure._tag).toBe("TooManyRequests")
    // Another session and an API key have places of their own.
    yield* cap.take(session("b"))
    yield* cap.take({ _tag: "ApiKey", keyId: "a" })
    first()
    first()
    yield* cap.take(session("a"))
    expect(Result.isFailure(yield* Effect.result(cap.take(session("a"))))).toBe(true)
  })
)

layer(testApp({ maxStreamsPerSession: 3 }), { excludeTestServices: true })("feed streams per session", (it) => {
  it.effect(
    "past MAX_STREAMS_PER_SESSION feed streams and long-polls one session gets 429 with Retry-After; closing one frees its place",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const workspace = yield* freshWorkspace
        const { cookie, client } = yield* signedInMember(base, workspace)
        const other = yield* signedInMember(base, workspace)
        const url = `${base}/api/audit/feed`
        const sse = { cookie, accept: "text/event-stream" }
        const open = [yield* openSse(url, sse), yield* openSse(url, sse), yield* openSse(url, sse)]
        expect(open.map((stream) => stream.status)).toEqual([200, 200, 200])

        const refused = yield* openSse(url, sse)
        expect(refused.status).toBe(429)
        expect(refused.headers.get("retry-after")).toBe("1")
        const poll = yield* client.get("/api/audit/feed?wait=30")
        expect(poll.status).toBe(429)
        expect(poll.body).toEqual(expect.objectContaining({ _tag: "TooManyRequests" }))
        // Another session of the same workspace is not held back.
        expect((yield* openSse(url, { cookie: other.cookie, accept: "text/event-stream" })).status).toBe(200)

        yield* open[0]?.close ?? Effect.void
        // The server notices the closed socket when it next writes; wait for the place to come back.
        for (let tries = 0; ; tries++) {
          const again = yield* openSse(url, sse)
          if (again.status === 200) break
          if (tries > 200) throw new Error("the closed stream's place never came back")
          yield* again.close
          yield* Effect.sleep("50 millis")
        }
      })
  )
})
