import { typeParams } from "./pathParams"
import type { Transport } from "./transport"
import type { Editor } from "./wire"

/** Live editors of a business object by record id. */
export type EditorsByRecord = Readonly<Record<string, ReadonlyArray<Editor>>>

export interface PresenceClient {
  /** `PUT /api/presence/:ns/:name/:id/:editor` (204): arrives, or renews. Needs update permission. */
  readonly heartbeat: (businessObject: string, id: string, editorId: string) => Promise<void>
  /** `DELETE` of the same path (204), sent with `keepalive` so that a closing tab still delivers it. */
  readonly leave: (businessObject: string, id: string, editorId: string) => Promise<void>
  /** `GET /api/presence/:ns/:name`: live editors grouped by record id. Needs read permission. */
  readonly list: (businessObject: string) => Promise<EditorsByRecord>
}

export const presenceClient = (transport: Transport): PresenceClient => {
  const editorPath = (businessObject: string, id: string, editor: string) => ({
    ...typeParams(businessObject),
    id,
    editor
  })
  return {
    heartbeat: (businessObject, id, editorId) =>
      transport.call((api) => api.presence.heartbeat({ params: editorPath(businessObject, id, editorId) })),
    leave: (businessObject, id, editorId) =>
      transport.call((api) => api.presence.leave({ params: editorPath(businessObject, id, editorId) }), {
        keepalive: true
      }),
    list: async (businessObject) =>
      (await transport.call((api) => api.presence.list({ params: typeParams(businessObject) }))).records
  }
}
