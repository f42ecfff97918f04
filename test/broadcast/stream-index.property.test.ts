import { describe, expect, it } from "@effect/vitest"
import { FastCheck as fc } from "effect"
import type { StreamOwner } from "../../src/broadcast/StreamIndex"
import { StreamIndex } from "../../src/broadcast/StreamIndex"
import type { StreamRevocation } from "../../src/broadcast/StreamRevocation"

class FakeStream {
  destroyed = false
  constructor(readonly id: number) {}
  destroy() {
    this.destroyed = true
  }
}

const owner = fc.record({
  session: fc.constantFrom("s1", "s2", "s3"),
  userId: fc.constantFrom("u1", "u2"),
  workspaceId: fc.constantFrom("w1", "w2")
})

const revocation: fc.Arbitrary<StreamRevocation> = fc.oneof(
  fc.record({
    _tag: fc.constant<"Session">("Session"),
    tokenHash: fc.constantFrom("s1", "s2", "s3", "s4"),
    reason: fc.constant<"signed-out">("signed-out")
  }),
  fc.record({
    _tag: fc.constant<"User">("User"),
    userIds: fc.subarray(["u1", "u2", "u3"]),
    workspaceId: fc.constantFrom("w1", "w2", null),
    reason: fc.constant<"membership-changed">("membership-changed")
  })
)

/** What a revocation names, by its definition, among the streams still registered. */
const expected = (live: ReadonlyArray<{ stream: FakeStream; owner: StreamOwner }>, r: StreamRevocation) =>
  live
    .filter(({ owner: o }) =>
      r._tag === "Session"
        ? o.session === r.tokenHash
        : r.userIds.includes(o.userId) && (r.workspaceId === null || r.workspaceId === o.workspaceId)
    )
    .map(({ stream }) => stream.id)
    .sort((a, b) => a - b)

describe("StreamIndex", () => {
  it("a revocation names exactly the registered, unreleased streams of its session, or of its users (in its workspace)", () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            owner.map((o) => ({ add: o })),
            fc.nat(30).map((i) => ({ release: i }))
          ),
          { maxLength: 40 }
        ),
        revocation,
        (steps, r) => {
          const index = new StreamIndex<FakeStream>(1_000)
          const live: Array<{ stream: FakeStream; owner: StreamOwner; release: () => void }> = []
          let next = 0
          for (const step of steps) {
            if ("add" in step) {
              const stream = new FakeStream(next++)
              live.push({ stream, owner: step.add, release: index.register(step.add, stream) })
            } else if (live.length > 0) {
              const [gone] = live.splice(step.release % live.length, 1)
              gone?.release()
              // Released twice: nothing more happens.
              gone?.release()
            }
          }
          const named = index
            .named(r)
            .map((stream) => stream.id)
            .sort((a, b) => a - b)
          expect(named).toEqual(expected(live, r))
          // Nothing is held for sessions and users without streams.
          expect(index.size).toEqual({
            sessions: new Set(live.map((entry) => entry.owner.session)).size,
            users: new Set(live.map((entry) => entry.owner.userId)).size
          })
        }
      )
    )
  })

  it("one stream past a session's cap drops (destroys) and forgets that session's oldest; other sessions keep theirs", () => {
    const index = new StreamIndex<FakeStream>(2)
    const a = { session: "s1", userId: "u1", workspaceId: "w1" }
    const b = { session: "s2", userId: "u1", workspaceId: "w1" }
    const streams = [0, 1, 2, 3].map((id) => new FakeStream(id))
    const [first, second, third, other] = streams
    if (first === undefined || second === undefined || third === undefined || other === undefined) throw new Error()
    index.register(a, first)
    index.register(b, other)
    index.register(a, second)
    expect(streams.map((s) => s.destroyed)).toEqual([false, false, false, false])
    index.register(a, third)
    expect(streams.map((s) => s.destroyed)).toEqual([true, false, false, false])
    expect(index.named({ _tag: "Session", tokenHash: "s1", reason: "signed-out" }).map((s) => s.id)).toEqual([1, 2])
    expect(index.named({ _tag: "Session", tokenHash: "s2", reason: "signed-out" }).map((s) => s.id)).toEqual([3])
  })
})
