import { Clock, Context, Duration, Effect, Exit, Layer } from "effect"
import { BroadcastBus } from "../broadcast/BroadcastBus"
import { publishHint } from "../broadcast/publishHint"
import { AppConfig } from "../config/AppConfig"
import { Forbidden } from "../api/errors"
import type { Conflict, NotFound, PubSubUnavailable } from "../api/errors"
import type { PresenceIntervals } from "../api/Broadcast"
import { Editor, PresenceList } from "../api/Editor"
import { PresenceStore } from "./PresenceStore"
import type { LiveEditor, PresenceEditor, PresenceRecordKey, TouchOutcome } from "./PresenceStore"
import { makeTickBatcher } from "./tickBatcher"
import { excerpt } from "../messages/inputExcerpt"

/**
 * Live editors grouped by record id. A Map first, then own properties
 * (fromEntries): a record id is data, and "__proto__" or "constructor" as
 * one must neither reach Object.prototype nor hide other records.
 */
export const groupByRecord = (
  live: ReadonlyArray<LiveEditor>
): { readonly [recordId: string]: ReadonlyArray<Editor> } => {
  const byRecord = new Map<string, Array<Editor>>()
  for (const editor of live) {
    const editors = byRecord.get(editor.recordId) ?? []
    editors.push(new Editor({ id: editor.editorId, name: editor.name, userId: editor.userId }))
    byRecord.set(editor.recordId, editors)
  }
  return Object.fromEntries(byRecord)
}

/** An editor lapses after this many heartbeat intervals without a heartbeat. */
export const missedHeartbeatsToLapse = 3

/**
 * The heartbeat and lapse intervals of `PRESENCE_HEARTBEAT_MS`: what this
 * service applies, and what every stream's `resync` tells the client.
 */
export const presenceIntervals = (heartbeat: Duration.Duration): PresenceIntervals => {
  const heartbeatMs = Math.max(1, Math.round(Duration.toMillis(heartbeat)))
  return { heartbeatMs, lapseMs: heartbeatMs * missedHeartbeatsToLapse }
}

/** One heartbeat's write, as the batch takes it. */
interface Touch {
  readonly key: PresenceRecordKey
  readonly editor: PresenceEditor
  readonly nowMs: number
  readonly lapseAtMs: number
}

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
export class Presence extends Context.Service<Presence>()("Presence", {
  make: Effect.gen(function* () {
    const store = yield* PresenceStore
    const bus = yield* BroadcastBus
    const config = yield* AppConfig
    const lapseAfter = presenceIntervals(config.presenceHeartbeat).lapseMs

    /**
     * The store's writes of heartbeats that arrive together (see
     * `makeTickBatcher`): one `touchAll` per business object of a workspace,
     * so one Redis script call for many heartbeats. Each heartbeat keeps its
     * own outcome; an arrival is still announced by the heartbeat that made it.
     */
    const touch = yield* makeTickBatcher((touches: ReadonlyArray<Touch>) =>
      Effect.gen(function* () {
        const groups = new Map<string, { readonly first: Touch; readonly indexes: Array<number> }>()
        touches.forEach((one, i) => {
          const key = `${one.key.workspace}\u0000${one.key.businessObject}`
          const group = groups.get(key)
          if (group === undefined) groups.set(key, { first: one, indexes: [i] })
          else group.indexes.push(i)
        })
        const exits: Array<Exit.Exit<TouchOutcome, PubSubUnavailable>> = []
        yield* Effect.forEach(
          groups.values(),
          ({ first, indexes }) =>
            store
              .touchAll(
                first.key.workspace,
                first.key.businessObject,
                indexes.map((i) => {
                  const one = touches[i] ?? first
                  return { recordId: one.key.recordId, editor: one.editor, nowMs: one.nowMs, lapseAtMs: one.lapseAtMs }
                })
              )
              .pipe(
                Effect.exit,
                Effect.flatMap((outcome) =>
                  Effect.sync(() => {
                    indexes.forEach((index, n) => {
                      exits[index] = Exit.map(outcome, (outcomes) => outcomes[n] ?? "renewed")
                    })
                  })
                )
              ),
          { concurrency: "unbounded", discard: true }
        )
        return exits
      })
    )

    const heldByOther = (editorId: string) =>
      new Forbidden({ message: `editor ${excerpt(editorId)} belongs to another user` })

    /** A hint is only a hint: a failed publish is logged, the heartbeat stands. */
    const announce = (key: PresenceRecordKey) =>
      publishHint(bus, "presence", {
        workspace: key.workspace,
        businessObject: key.businessObject,
        businessObjectId: key.recordId
      })

    /** The editor goes (announced) because its record can no longer be edited; someone else's editor id stays. */
    const dropEditor = (key: PresenceRecordKey, editorId: string, caller: PresenceCaller) =>
      Effect.gen(function* () {
        const outcome = yield* store.leave(key, editorId, caller.userId, yield* Clock.currentTimeMillis)
        if (outcome === "left") yield* announce(key)
      })

    /**
     * `editable` is checked on EVERY heartbeat, before the store is touched:
     * an editor can neither arrive at nor stay on a record that does not exist
     * (404) or cannot be edited (409); one already present is removed then.
     */
    const heartbeat = <E extends NotFound | Conflict = never>(
      key: PresenceRecordKey,
      editorId: string,
      caller: PresenceCaller,
      editable: Effect.Effect<void, E> = Effect.void
    ) =>
      Effect.gen(function* () {
        yield* editable.pipe(Effect.tapError(() => dropEditor(key, editorId, caller)))
        const now = yield* Clock.currentTimeMillis
        const outcome = yield* touch({
          key,
          editor: { editorId, userId: caller.userId, name: caller.name },
          nowMs: now,
          lapseAtMs: now + lapseAfter
        })
        if (outcome === "held-by-other") return yield* heldByOther(editorId)
        if (outcome === "arrived") yield* announce(key)
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
        return new PresenceList({ records: groupByRecord(live) })
      })

    return { heartbeat, leave, list } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
