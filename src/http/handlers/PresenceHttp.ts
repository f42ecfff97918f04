import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Effect } from "effect"
import { ServedApi } from "../ServedApi"
import { makePresenceActions } from "./presenceActions"

export const PresenceHttp = HttpApiBuilder.group(ServedApi, "presence", (handlers) =>
  Effect.map(makePresenceActions, (actions) =>
    handlers
      .handle("heartbeat", ({ params }) => actions.heartbeat(params))
      .handle("leave", ({ params }) => actions.leave(params))
      .handle("list", ({ params }) => actions.list(params.namespace, params.name))
  )
)
