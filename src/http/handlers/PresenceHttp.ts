import { HttpApiBuilder } from "@effect/platform"
import { Effect, ParseResult, Schema } from "effect"
import { BusinessObjectGuard } from "../../auth/BusinessObjectGuard"
import type { Permission } from "../../auth/Grants"
import { BadRequest } from "../../api/errors"
import { Api } from "../../api/Api"
import { EditableRecords } from "../../presence/EditableRecords"
import { EditorId } from "../../api/Editor"
import { Presence } from "../../presence/Presence"

const isEditorId = Schema.is(EditorId)

const decodeEditorId = (editor: string) =>
  isEditorId(editor)
    ? Effect.succeed(editor)
    : Schema.decodeUnknown(EditorId)(editor).pipe(
        Effect.mapError((error) => new BadRequest({ message: ParseResult.TreeFormatter.formatErrorSync(error) }))
      )

export const PresenceHttp = HttpApiBuilder.group(Api, "presence", (handlers) =>
  Effect.gen(function* () {
    const presence = yield* Presence
    const guard = yield* BusinessObjectGuard
    const editableRecords = yield* EditableRecords

    const authorize = (namespace: string, name: string, permission: Permission) => {
      const businessObject = `${namespace}/${name}`
      return Effect.map(guard.require(businessObject, permission), ({ principal }) => ({ businessObject, principal }))
    }

    const editorOf = (path: { namespace: string; name: string; id: string; editor: string }) =>
      Effect.gen(function* () {
        const { businessObject, principal } = yield* authorize(path.namespace, path.name, "update")
        const editorId = yield* decodeEditorId(path.editor)
        const key = { workspace: principal.workspace.id, businessObject, recordId: path.id }
        const editable = Effect.suspend(() => editableRecords.require(principal.workspace, businessObject, path.id))
        return { key, editorId, caller: { userId: principal.id, name: principal.name }, editable }
      })

    return handlers
      .handle("heartbeat", ({ path }) =>
        Effect.flatMap(editorOf(path), ({ caller, editorId, key, editable }) =>
          presence.heartbeat(key, editorId, caller, editable)
        ).pipe(Effect.asVoid)
      )
      .handle("leave", ({ path }) =>
        Effect.flatMap(editorOf(path), ({ caller, editorId, key }) => presence.leave(key, editorId, caller)).pipe(
          Effect.asVoid
        )
      )
      .handle("list", ({ path }) =>
        Effect.flatMap(authorize(path.namespace, path.name, "read"), ({ businessObject, principal }) =>
          presence.list(principal.workspace.id, businessObject)
        )
      )
  })
)
