import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option, ParseResult, Schema } from "effect"
import { Access } from "../auth/Access"
import type { Permission } from "../auth/Grants"
import { CurrentPrincipal } from "../auth/Principal"
import { BadRequest, NotFound } from "../errors"
import { Api } from "../http/Api"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { EditorId } from "./Editor"
import { Presence } from "./Presence"

const decodeEditorId = (editor: string) =>
  Schema.decodeUnknown(EditorId)(editor).pipe(
    Effect.mapError((error) => new BadRequest({ message: ParseResult.TreeFormatter.formatErrorSync(error) }))
  )

export const PresenceHttp = HttpApiBuilder.group(Api, "presence", (handlers) =>
  Effect.gen(function* () {
    const presence = yield* Presence
    const registry = yield* PluginRegistry
    const access = yield* Access

    const authorize = (namespace: string, name: string, permission: Permission) =>
      Effect.gen(function* () {
        const businessObject = `${namespace}/${name}`
        if (Option.isNone(registry.find(businessObject))) {
          return yield* new NotFound({ message: `unknown business object: ${businessObject}` })
        }
        yield* access.require(businessObject, permission)
        const principal = yield* CurrentPrincipal
        return { businessObject, principal }
      })

    const editorOf = (path: { namespace: string; name: string; id: string; editor: string }) =>
      Effect.gen(function* () {
        const { businessObject, principal } = yield* authorize(path.namespace, path.name, "update")
        const editorId = yield* decodeEditorId(path.editor)
        const key = { workspace: principal.workspace.id, businessObject, recordId: path.id }
        return { key, editorId, caller: { userId: principal.id, name: principal.name } }
      })

    return handlers
      .handle("heartbeat", ({ path }) =>
        Effect.flatMap(editorOf(path), ({ caller, editorId, key }) => presence.heartbeat(key, editorId, caller)).pipe(
          Effect.asVoid
        )
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
