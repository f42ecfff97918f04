import { Effect, Layer, Ref } from "effect"
import type { LeaveOutcome, LiveEditor, PresenceEditor, PresenceRecordKey, TouchOutcome } from "./PresenceStore"
import { PresenceStore } from "./PresenceStore"

interface Entry {
  readonly recordId: string
  readonly editorId: string
  readonly userId: string
  readonly name: string
  readonly lapseAtMs: number
}

/** Business object (of a workspace) -> editor (of a record) -> entry. Never mutated in place. */
type State = ReadonlyMap<string, ReadonlyMap<string, Entry>>

const objectKey = (workspace: string, businessObject: string) => JSON.stringify([workspace, businessObject])
const editorKey = (recordId: string, editorId: string) => JSON.stringify([recordId, editorId])

/** The business object's live editors only: lapsed ones are dropped on every operation. */
const live = (state: State, key: string, nowMs: number): Map<string, Entry> =>
  new Map([...(state.get(key) ?? [])].filter(([, entry]) => entry.lapseAtMs > nowMs))

const replace = (state: State, key: string, editors: ReadonlyMap<string, Entry>): State => {
  const next = new Map(state)
  if (editors.size === 0) next.delete(key)
  else next.set(key, editors)
  return next
}

const make = Effect.gen(function* () {
  yield* Effect.logWarning("presence store: in-process, single instance only")
  const state = yield* Ref.make<State>(new Map())

  const touch = (key: PresenceRecordKey, editor: PresenceEditor, nowMs: number, lapseAtMs: number) =>
    Ref.modify(state, (current): [TouchOutcome, State] => {
      const object = objectKey(key.workspace, key.businessObject)
      const editors = live(current, object, nowMs)
      const id = editorKey(key.recordId, editor.editorId)
      const held = editors.get(id)
      if (held !== undefined && held.userId !== editor.userId) return ["held-by-other", current]
      editors.set(id, { recordId: key.recordId, ...editor, lapseAtMs })
      return [held === undefined ? "arrived" : "renewed", replace(current, object, editors)]
    })

  return PresenceStore.of({
    touch,
    touchAll: (workspace, businessObject, touches) =>
      Effect.forEach(touches, ({ recordId, editor, nowMs, lapseAtMs }) =>
        touch({ workspace, businessObject, recordId }, editor, nowMs, lapseAtMs)
      ),
    leave: (key, editorId, userId, nowMs) =>
      Ref.modify(state, (current): [LeaveOutcome, State] => {
        const object = objectKey(key.workspace, key.businessObject)
        const editors = live(current, object, nowMs)
        const id = editorKey(key.recordId, editorId)
        const held = editors.get(id)
        const outcome = held === undefined ? "absent" : held.userId !== userId ? "held-by-other" : "left"
        if (outcome === "left") editors.delete(id)
        return [outcome, replace(current, object, editors)]
      }),
    list: (workspace, businessObject, nowMs) =>
      Ref.modify(state, (current): [ReadonlyArray<LiveEditor>, State] => {
        const object = objectKey(workspace, businessObject)
        const editors = live(current, object, nowMs)
        const result = [...editors.values()].map(({ recordId, editorId, userId, name }) => ({
          recordId,
          editorId,
          userId,
          name
        }))
        return [result, replace(current, object, editors)]
      }),
    kind: "in-process"
  })
})

/** Presence without Redis: one process only. */
export const layer: Layer.Layer<PresenceStore> = Layer.effect(PresenceStore, make)
