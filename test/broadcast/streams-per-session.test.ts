import { expect, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { BroadcastBus } from "../../src/broadcast/BroadcastBus"
import { baseUrl, freshWorkspace, testApp, testPassword } from "../support/TestApp"
import { createRecord, signedInMember } from "../support/api"
import { signIn } from "../support/http"
import { openSse } from "../support/sse"
import { awaitHint, changed, eventually, opened } from "./streamHelpers"

const cap = 3
const deal = "crm/deal"

/** A stream read to its end: resolves with everything received once the server closes it. */
const openUntilEnd = (url: string, cookie: string) =>
  Effect.gen(function* () {
    const controller = new AbortController()
    yield* Effect.addFinalizer(() => Effect.sync(() => controller.abort()))
    const response = yield* Effect.promise(() => fetch(url, { headers: { cookie }, signal: controller.signal }))
    expect(response.status).toBe(200)
    const ended = yield* Effect.promise(() => response.text().catch(() => "aborted")).pipe(Effect.forkScoped)
    return ended
  })

layer(testApp({ maxStreamsPerSession: cap }), { excludeTestServices: true })("MAX_STREAMS_PER_SESSION", (it) => {
  it.effect(
    "one stream past the cap closes the session's oldest; the others and another session's stay and get hints",
    () =>
      Effect.gen(function* () {
        const base = yield* baseUrl
        const bus = yield* BroadcastBus
        const url = `${base}/api/broadcast`
        const workspace = yield* freshWorkspace
        const { user, cookie, client } = yield* signedInMember(base, workspace)
        // The same user's second sign-in is another session, with a cap of its own.
        const otherCookie = yield* signIn(base, {
          workspace: workspace.slug,
          email: user.email,
          password: testPassword
        })
        const others = yield* Effect.forEach(Array.from({ length: cap }), () => openSse(url, { cookie: otherCookie }))

        const oldest = yield* openUntilEnd(url, cookie)
        const rest = yield* Effect.forEach(Array.from({ length: cap - 1 }), () => openSse(url, { cookie }))
        // Still at the cap: nothing closed.
        expect(oldest.pollUnsafe()).toBeUndefined()
        const before = yield* bus.subscriberCount

        const newest = yield* openSse(url, { cookie })
        expect(newest.status).toBe(200)
        const received = yield* Fiber.join(oldest).pipe(
          Effect.timeoutOrElse({
            duration: "10 seconds",
            orElse: () => Effect.fail(new Error("the oldest stream was not closed"))
          }),
          Effect.orDie
        )
        expect(received).toContain(": connected")
        // One in, one out.
        yield* eventually(
          "the evicted stream leaves the hub",
          Effect.map(bus.subscriberCount, (n) => n === before)
        )

        const record = yield* createRecord(client, deal, { title: "Still hinted" })
        for (const stream of [...rest, newest, ...others]) {
          expect(yield* awaitHint(stream, record.id)).toEqual([opened, changed(deal, record.id)])
        }
      })
  )
})
