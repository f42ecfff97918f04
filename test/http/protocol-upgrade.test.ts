import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { rawExchange, requestHead } from "../support/rawHttp"
import { baseUrl, TestApp } from "../support/TestApp"

layer(TestApp, { excludeTestServices: true })("a request asking to switch protocols", (it) => {
  it.effect("gets the ordinary answer of its route (nothing here speaks WebSocket or h2c), headers included", () =>
    Effect.gen(function* () {
      const base = yield* baseUrl
      for (const upgrade of ["websocket", "h2c"]) {
        const answer = yield* rawExchange(
          base,
          requestHead("GET", base, "/api/health/live", {
            connection: "Upgrade, close",
            upgrade,
            "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
            "sec-websocket-version": "13",
            "x-request-id": `upgrade-${upgrade}`
          })
        )
        expect(answer.status, upgrade).toBe(200)
        expect(answer.head.toLowerCase(), upgrade).toContain(`x-request-id: upgrade-${upgrade}`)
        expect(answer.head.toLowerCase(), upgrade).toContain("x-content-type-options: nosniff")
        expect(JSON.parse(answer.body), upgrade).toMatchObject({ status: "live" })
      }
    })
  )
})
