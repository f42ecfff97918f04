import { describe, expect, it } from "@effect/vitest"
import { Arbitrary, Schema } from "effect"
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

const Owner = Schema.Struct({
  session: Schema.Literals(["s1", "s2", "s3"]),
  userId: Schema.Literals(["u1", "u2"]),
  workspaceId: Schema.Literals(["w1", "w2"])
})

const revocation: Arbitrary.Arbitrary<StreamRevocation> = Arbitrary.schema(
  Schema.Union([
    Schema.TaggedStruct("Session", {
      tokenHash: Schema.Literals(["s1", "s2", "s3", "s4"]),
      reason: Schema.Literal("signed-out")
    }),
    Schema.TaggedStruct("User", {
      // A subset of the users, each once.
      userIds: Schema.Array(Schema.Literals(["u1", "u2", "u3"])).check(Schema.isUnique()),
      workspaceId: Schema.NullOr(Schema.Literals(["w1", "w2"])),
      reason: Schema.Literal("membership-changed")
    }),
    Schema.TaggedStruct("Workspace", {
      workspaceId: Schema.Literals(["w1", "w2", "w3"]),
      reason: Schema.Literal("workspace-removed")
    })
  ])
)

const steps = Arbitrary.schema(
  Schema.Array(
    Schema.Union([
      Schema.Struct({ add: Owner }),
      Schema.Struct({ release: Schema.Int.check(Schema.isBetween({ minimum: 0, maximum: 30 })) })
    ])
  ).check(Schema.isMaxLength(40))
)

/** What a revocation names, by its definition, among the streams still registered. */
const expected = (live: ReadonlyArray<{ stream: FakeStream; owner: StreamOwner }>, r: StreamRevocation) =>
  live
    .filter(({ owner: o }) =>
      r._tag === "Session"
        ? o.session === r.tokenHash
        : r._tag === "Workspace"
          ? o.workspaceId === r.workspaceId
          : r.userIds.includes(o.userId) && (r.workspaceId === null || r.workspaceId === o.workspaceId)
    )
    .map(({ stream }) => stream.id)
    .sort((a, b) => a - b)

describe("StreamIndex", () => {
  it.prop(
    "a revocation names exactly the registered, unreleased streams of its session, of its users (in its workspace), or of its workspace",
    [steps, revocation],
    ([steps, r]) => {
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
