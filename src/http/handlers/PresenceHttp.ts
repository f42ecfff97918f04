import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../api/Api"
import { makePresenceActions } from "./presenceActions"

export const PresenceHttp = HttpApiBuilder.group(Api, "presence", (handlers) =>
  Effect.map(makePresenceActions, (actions) =>
    handlers
      .handle("heartbeat", ({ path }) => actions.heartbeat(path))
      .handle("leave", ({ path }) => actions.leave(path))
      .handle("list", ({ path }) => actions.list(path.namespace, path.name))
  )
)
