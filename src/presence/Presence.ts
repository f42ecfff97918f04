import { Clock, Duration, Effect } from "effect"
import { BroadcastBus } from "../broadcast/BroadcastBus"
import { publishHint } from "../broadcast/publishHint"
import { AppConfig } from "../config/AppConfig"
import { Forbidden, NotFound } from "../errors"
import { Editor, PresenceList } from "./Editor"
import { PresenceStore } from "./PresenceStore"
import type { PresenceRecordKey } from "./PresenceStore"

/** An editor lapses after this many heartbeat intervals without a heartbeat. */
export const missedHeartbeatsToLapse = 3

export interface PresenceCaller {
  readonly userId: string
  readonly name: string
}

/**
 * Editor presence, following the spec's state table: an arrival and a
 * departure broadcast `presence`; a renewal is silent; a lapse (three
 * heartbeat intervals with none) is not announced. Time comes from Effect's
 * Clock, so tests drive it with TestClock.
 */
export class Presence extends Effect.Service<Presence>()("Presence", {
  effect: Effect.gen(function* () {
    const store = yield* PresenceStore
    const bus = yield* BroadcastBus
    const config = yield* AppConfig
    const lapseAfter = Duration.toMillis(Duration.times(config.presenceHeartbeat, missedHeartbeatsToLapse))

    const heldByOther = (editorId: string) =>
      new Forbidden({ message: `editor ${editorId} belongs to another user` })

    /** A hint is only a hint: a failed publish is logged, the heartbeat stands. */
    const announce = (key: PresenceRecordKey) =>
      publishHint(bus, "presence", {
        workspace: key.workspace,
        businessObject: key.businessObject,
        businessObjectId: key.recordId
      })

    /**
     * `recordExists` is asked on arrival only (renewals stay one Redis call):
     * an editor cannot arrive at a record that does not exist.
     */
    const heartbeat = (
      key: PresenceRecordKey,
      editorId: string,
      caller: PresenceCaller,
      recordExists: Effect.Effect<boolean> = Effect.succeed(true)
    ) =>
      Effect.gen(function* () {
        const now = yield* Clock.currentTimeMillis
        const outcome = yield* store.touch(key, { editorId, userId: caller.userId, name: caller.name }, now, now + lapseAfter)
        if (outcome === "held-by-other") return yield* heldByOther(editorId)
        if (outcome === "arrived") {
          if (!(yield* recordExists)) {
            yield* store.leave(key, editorId, caller.userId, now)
            return yield* new NotFound({ message: `no ${key.businessObject} record ${key.recordId}` })
          }
          yield* announce(key)
        }
        return outcome
      })

    const leave = (key: PresenceRecordKey, editorId: string, caller: PresenceCaller) =>
      Effect.gen(function* () {
        const outcome = yield* store.leave(key, editorId, caller.userId, yield* Clock.currentTimeMillis)
        if (outcome === "held-by-other") return yield* heldByOther(editorId)
        if (outcome === "left") yield* announce(key)
        return outcome
      })

    const list = (workspace: string, businessObject: string) =>
      Effect.gen(function* () {
        const live = yield* store.list(workspace, businessObject, yield* Clock.currentTimeMillis)
        const records: Record<string, Array<Editor>> = {}
        for (const editor of live) {
          ;(records[editor.recordId] ??= []).push(new Editor({ id: editor.editorId, name: editor.name }))
        }
        return new PresenceList({ records })
      })

    return { heartbeat, leave, list } as const
  })
}) {}
