import { describe, expect, it } from "@effect/vitest"
import type { Connection } from "effect/sql/SqlConnection"
import { ConnectionError, SqlError } from "effect/sql/SqlError"
import { Effect, Option, Stream } from "effect"
import { ReadPlacement } from "../../src/db/ReadPlacement"
import { makeReplicaTracker } from "../../src/db/ReplicaTracker"
import { routedAcquirer } from "../../src/db/replicaRouting"

/**
 * The routing of reads between a replica and the primary (src/db/replicaRouting.ts), against fake
 * connections and a fake replica position: which connection a read gets for each placement, the wait for a
 * commit position, and a statement the replica fails run again on the primary. Against real servers:
 * test/faults/9-read-replica.test.ts.
 */

const lost = () =>
  new SqlError({
    reason: new ConnectionError({
      cause: Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }),
      message: "the connection was reset",
      operation: "execute"
    })
  })

/** A connection answering every statement with one row naming it, or failing every one with `failure`. */
const connection = (name: string, failure?: SqlError): Connection => {
  const answer = failure === undefined ? Effect.succeed([{ served: name }]) : Effect.fail(failure)
  return {
    execute: () => answer,
    executeRaw: () => answer,
    executeStream: () => Stream.fromEffect(answer),
    executeValues: () => Effect.map(answer, (rows) => rows.map((row) => [row.served])),
    executeValuesUnprepared: () => Effect.map(answer, (rows) => rows.map((row) => [row.served])),
    executeUnprepared: () => answer
  }
}

/** A replica at `position()` (none: down) and a router over it; `statement` runs one read and names who served it. */
const setup = (options: { readonly position: () => Option.Option<bigint>; readonly replicaFails?: SqlError }) =>
  Effect.gen(function* () {
    const tracker = yield* makeReplicaTracker({
      replica: Effect.sync(options.position),
      primary: Effect.succeed(0n)
    })
    const acquire = routedAcquirer({
      replica: Effect.succeed(connection("replica", options.replicaFails)),
      primary: Effect.succeed(connection("primary")),
      tracker
    })
    const statement = Effect.scoped(Effect.flatMap(acquire, (conn) => conn.execute("SELECT 1", [], undefined))).pipe(
      Effect.map((rows): unknown => rows[0]?.served)
    )
    // Its first check runs at once, in its own fiber.
    while (!tracker.usable()) yield* Effect.yieldNow
    return { tracker, statement }
  })

describe("routed reads", () => {
  it.live("go to the replica without a position, to the primary when asked, or when the replica is down", () =>
    Effect.gen(function* () {
      let up = true
      const { statement, tracker } = yield* setup({ position: () => (up ? Option.some(100n) : Option.none()) })
      expect(yield* Effect.provideService(statement, ReadPlacement, { _tag: "replica" })).toBe("replica")
      expect(yield* statement).toBe("primary")
      up = false
      yield* tracker.markDown
      expect(yield* Effect.provideService(statement, ReadPlacement, { _tag: "replica" })).toBe("primary")
      expect(tracker.health().status).toBe("down")
    }).pipe(Effect.scoped)
  )

  it.live(
    "with a position: on the replica once it has replayed it, on the primary when it does not within the wait",
    () =>
      Effect.gen(function* () {
        let polls = 0
        const { statement } = yield* setup({
          position: () => Option.some(++polls < 5 ? 100n : 150n)
        })
        // Replayed on the fifth poll: the read waits for it and is served by the replica.
        expect(yield* Effect.provideService(statement, ReadPlacement, { _tag: "after", lsn: 150n })).toBe("replica")
        expect(polls).toBeGreaterThanOrEqual(5)
        // Already known to be replayed: no poll.
        const before = polls
        expect(yield* Effect.provideService(statement, ReadPlacement, { _tag: "after", lsn: 120n })).toBe("replica")
        expect(polls).toBe(before)
        // Never replayed: the primary, once the wait is over.
        expect(yield* Effect.provideService(statement, ReadPlacement, { _tag: "after", lsn: 10_000n })).toBe("primary")
      }).pipe(Effect.scoped)
  )

  it.live(
    "a statement the replica fails with a lost connection runs again on the primary, and the replica is down",
    () =>
      Effect.gen(function* () {
        const { statement, tracker } = yield* setup({ position: () => Option.some(100n), replicaFails: lost() })
        expect(tracker.usable()).toBe(true)
        expect(yield* Effect.provideService(statement, ReadPlacement, { _tag: "replica" })).toBe("primary")
        expect(tracker.usable()).toBe(false)
      }).pipe(Effect.scoped)
  )
})
