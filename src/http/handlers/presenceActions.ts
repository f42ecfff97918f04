import { Effect, Schema } from "effect"
import { BadRequest } from "../../api/errors"
import { EditorId } from "../../api/Editor"
import { BusinessObjectGuard } from "../../auth/BusinessObjectGuard"
import type { Permission } from "../../auth/Grants"
import { EditableRecords } from "../../presence/EditableRecords"
import { Presence } from "../../presence/Presence"

const isEditorId = Schema.is(EditorId)

const decodeEditorId = (editor: string) =>
  isEditorId(editor)
    ? Effect.succeed(editor)
    : Schema.decodeUnknownEffect(EditorId)(editor).pipe(
        Effect.mapError((error) => new BadRequest({ message: error.message }))
      )

/** The path of a heartbeat or a leave, as the router decodes it. */
export interface EditorPath {
  readonly namespace: string
  readonly name: string
  readonly id: string
  readonly editor: string
}

/**
 * What the presence routes do for the current principal: the `HttpApi`
 * handlers (`PresenceHttp`) and the heartbeat's fast route
 * (`FastHeartbeat`) both run these.
 */
export const makePresenceActions = Effect.gen(function* () {
  const presence = yield* Presence
  const guard = yield* BusinessObjectGuard
  const editableRecords = yield* EditableRecords

  const authorize = (namespace: string, name: string, permission: Permission) => {
    const businessObject = `${namespace}/${name}`
    return Effect.map(guard.require(businessObject, permission), ({ principal }) => ({ businessObject, principal }))
  }

  const editorOf = (path: EditorPath) =>
    Effect.gen(function* () {
      const { businessObject, principal } = yield* authorize(path.namespace, path.name, "update")
      const editorId = yield* decodeEditorId(path.editor)
      const key = { workspace: principal.workspace.id, businessObject, recordId: path.id }
      const editable = Effect.suspend(() => editableRecords.require(principal.workspace, businessObject, path.id))
      return { key, editorId, caller: { userId: principal.id, name: principal.name }, editable }
    })

  const heartbeat = (path: EditorPath) =>
    Effect.flatMap(editorOf(path), ({ caller, editorId, key, editable }) =>
      presence.heartbeat(key, editorId, caller, editable)
    ).pipe(Effect.asVoid)

  const leave = (path: EditorPath) =>
    Effect.flatMap(editorOf(path), ({ caller, editorId, key }) => presence.leave(key, editorId, caller)).pipe(
      Effect.asVoid
    )

  const list = (namespace: string, name: string) =>
    Effect.flatMap(authorize(namespace, name, "read"), ({ businessObject, principal }) =>
      presence.list(principal.workspace.id, businessObject)
    )

  return { heartbeat, leave, list } as const
})
