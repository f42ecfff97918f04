import { Context, Effect, Layer } from "effect"
import { BroadcastBus } from "../broadcast/BroadcastBus"
import { revokeStreams } from "../broadcast/revokeStreams"
import { Caches } from "../cache/Caches"
import { Sessions } from "./Sessions"

/**
 * Ending sessions: the rows go first, then every instance's cached copy (from
 * then on no request is let in), then the open broadcast streams of those
 * sessions end on every instance.
 */
export class SignOuts extends Context.Service<SignOuts>()("SignOuts", {
  make: Effect.gen(function* () {
    const sessions = yield* Sessions
    const bus = yield* BroadcastBus
    const caches = yield* Caches

    /** Signs one session out (by its token's hash). */
    const session = (tokenHash: string) =>
      Effect.gen(function* () {
        yield* sessions.end(tokenHash)
        yield* caches.invalidate({ _tag: "Session", tokenHash })
        yield* revokeStreams(bus, { _tag: "Session", tokenHash, reason: "signed-out" })
      })

    /** Signs a user out of every session, in every workspace; how many sessions there were. */
    const everywhere = (userId: string) =>
      Effect.gen(function* () {
        const ended = yield* sessions.endAllOf(userId)
        yield* caches.invalidate({ _tag: "User", userId })
        yield* revokeStreams(bus, { _tag: "User", userIds: [userId], workspaceId: null, reason: "signed-out" })
        return ended
      })

    return { session, everywhere } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make).pipe(Layer.provide(Sessions.layer))
}
