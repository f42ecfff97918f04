import { expect, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { createRecord, expectStatus, signedInMember } from "../support/api"
import { rawExchange, requestHead } from "../support/rawHttp"
import { baseUrl, freshWorkspace, testApp } from "../support/TestApp"

/**
 * Slow clients (docs/security.md, "Time limits"): headers and body must
 * arrive within REQUEST_TIMEOUT_MS (here 300 ms), else 408 and the
 * connection is closed; an answered request, such as a broadcast stream, is
 * never cut by it.
 */

const timeout = 300

layer(testApp({ requestTimeout: Duration.millis(timeout), broadcastKeepAlive: Duration.millis(50) }), {
  excludeTestServices: true
})("request time limits", (it) => {
  it.effect("headers that never end: 408 and the connection closed", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const partial = `GET /api/health HTTP/1.1\r\nHost: ${new URL(base).host}\r\nX-Slow: `
      const answer = yield* rawExchange(base, partial)
      expect(answer.status).toBe(408)
      expect(answer.closed).toBe(true)
    })
  )

  it.effect("a body that stops half-way: 408, the connection closed, nothing written", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const { client, cookie } = yield* signedInMember(base, yield* freshWorkspace)
      yield* createRecord(client, "crm/company", { name: "Acme" })
      const count = Effect.map(
        client.get("/api/records/crm/company"),
        (r) => (expectStatus(200)(r) as { records: Array<unknown> }).records.length
      )
      const before = yield* count
      const body = JSON.stringify({ values: { name: "Slow" } })
      const head = requestHead("POST", base, "/api/records/crm/company", {
        "content-type": "application/json",
        "content-length": String(body.length),
        cookie,
        origin: base
      })
      const answer = yield* rawExchange(base, head, [Buffer.from(body.slice(0, 10))])
      expect(answer.status).toBe(408)
      expect(answer.closed).toBe(true)
      expect(yield* count).toBe(before)
    })
  )

  it.effect("an open broadcast stream outlives the limit many times over", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      const { cookie } = yield* signedInMember(base, yield* freshWorkspace)
      const controller = new AbortController()
      const response = yield* Effect.acquireRelease(
        Effect.promise(() => fetch(`${base}/api/broadcast`, { headers: { cookie }, signal: controller.signal })),
        () => Effect.sync(() => controller.abort())
      )
      expect(response.status).toBe(200)
      const started = Date.now()
      // Read keep-alive comments (every 50 ms) until the stream has been open for 5 timeouts.
      const outcome = yield* Effect.promise(async () => {
        const reader = response.body!.getReader()
        let keepAlives = 0
        while (Date.now() - started < 5 * timeout) {
          const { done, value } = await reader.read()
          if (done) return { ended: true, keepAlives }
          keepAlives += new TextDecoder().decode(value).split(": keep-alive").length - 1
        }
        return { ended: false, keepAlives }
      })
      expect(outcome.ended).toBe(false)
      expect(outcome.keepAlives).toBeGreaterThan(3)
    })
  )
})
