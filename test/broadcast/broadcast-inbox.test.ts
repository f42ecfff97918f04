import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { BroadcastEnvelope } from "../../src/broadcast/Broadcast"
import * as BroadcastHub from "../../src/broadcast/BroadcastHub"
import { inboxCapacity, makeInbox } from "../../src/broadcast/BroadcastInbox"
import { eventually } from "./streamHelpers"

const envelope = (workspace: string, n: number) =>
  new BroadcastEnvelope({ workspace, type: "changed", data: { businessObject: "crm/deal", businessObjectId: `d${n}` } })

describe("BroadcastInbox (the shared subscription's Effect PubSub)", () => {
  it.live("routes what the transport offers to the streams of its workspace, in order", () =>
    Effect.gen(function* () {
      const hub = yield* BroadcastHub.make()
      const inbox = yield* makeInbox(hub)
      const got: Record<string, Array<string>> = { a: [], b: [] }
      for (const workspace of ["a", "b"] as const) {
        yield* hub.attach(workspace, { offer: (hint) => got[workspace]!.push(hint.data.businessObjectId) })
      }
      inbox.offer(envelope("a", 1))
      inbox.offer(envelope("b", 2))
      inbox.offer(envelope("a", 3))
      inbox.offer(envelope("nobody", 4))
      yield* eventually(
        "both delivered",
        Effect.sync(() => got.a!.length === 2 && got.b!.length === 1)
      )
      expect(got).toEqual({ a: ["d1", "d3"], b: ["d2"] })
    }).pipe(Effect.scoped)
  )

  it.live("is bounded: a burst beyond its capacity keeps the newest broadcasts and never blocks the transport", () =>
    Effect.gen(function* () {
      const hub = yield* BroadcastHub.make()
      const inbox = yield* makeInbox(hub)
      const got: Array<string> = []
      yield* hub.attach("a", { offer: (hint) => got.push(hint.data.businessObjectId) })
      const burst = inboxCapacity + 1_000
      // Offered synchronously, as from one ioredis callback after another: the router cannot run in between.
      for (let n = 0; n < burst; n++) inbox.offer(envelope("a", n))
      yield* eventually(
        "the burst is routed",
        Effect.sync(() => got.at(-1) === `d${burst - 1}`)
      )
      expect(got).toHaveLength(inboxCapacity)
      expect(got[0]).toBe(`d${burst - inboxCapacity}`)
    }).pipe(Effect.scoped)
  )
})
