import { HttpApiBuilder } from "@effect/platform"
import { Effect, ParseResult, Schema } from "effect"
import { BusinessObjectGuard } from "../../auth/BusinessObjectGuard"
import type { Permission } from "../../auth/Grants"
import { BadRequest, Conflict } from "../../api/errors"
import { Api } from "../../api/Api"
import { Records } from "../../records/Records"
import type { Workspace } from "../../api/Workspace"
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
    const records = yield* Records

    const authorize = (namespace: string, name: string, permission: Permission) => {
      const businessObject = `${namespace}/${name}`
      return Effect.map(guard.require(businessObject, permission), ({ principal }) => ({ businessObject, principal }))
    }

    /** An editor may be present on what a PATCH may change: a draft or an operational record of this business object. */
    const editableRecord = (workspace: Workspace, businessObject: string, id: string) =>
      Effect.flatMap(records.get(workspace, businessObject, id), (record) =>
        record.state === "archived"
          ? Effect.fail(
              new Conflict({ message: `an archived ${businessObject} record cannot be edited: restore it first` })
            )
          : Effect.void
      )

    const editorOf = (path: { namespace: string; name: string; id: string; editor: string }) =>
      Effect.gen(function* () {
        const { businessObject, principal } = yield* authorize(path.namespace, path.name, "update")
        const editorId = yield* decodeEditorId(path.editor)
        const key = { workspace: principal.workspace.id, businessObject, recordId: path.id }
        const editable = Effect.suspend(() => editableRecord(principal.workspace, businessObject, path.id))
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
