import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Layer } from "effect"
import { FeedMode } from "../../src/feedPositions/FeedMode"
import { testServices } from "../support/TestApp"

/** The machine's PostgreSQL runs `wal_level=replica`: no logical decoding. */
describe("the feed mode chosen at start-up", () => {
  it.live("auto on a server without logical decoding: lock, saying why", () =>
    Effect.gen(function* () {
      const mode = yield* FeedMode
      expect(mode).toMatchObject({ mode: "lock", slot: "audit_feed" })
      expect(mode.reason).toContain("wal_level is replica")
    }).pipe(Effect.provide(testServices()))
  )

  it.live("wal forced there: start-up fails, naming the variable and why", () =>
    Effect.gen(function* () {
      const exit = yield* Layer.build(testServices({ feedPositions: "wal" })).pipe(Effect.scoped, Effect.exit)
      expect(Exit.isFailure(exit)).toBe(true)
      const message = Exit.isFailure(exit) ? String(Cause.squash(exit.cause)) : ""
      expect(message).toContain("FEED_POSITIONS=wal needs PostgreSQL with logical decoding")
      expect(message).toContain("wal_level is replica")
    })
  )
})
