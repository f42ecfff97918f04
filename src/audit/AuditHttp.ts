import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { Access } from "../auth/Access"
import { CurrentPrincipal } from "../auth/Principal"
import { BadRequest, NotFound } from "../errors"
import { Api } from "../http/Api"
import { PluginRegistry } from "../plugins/PluginRegistry"
import { decodeCursor } from "./Cursor"
import { Timeline } from "./Timeline"

export const AuditHttp = HttpApiBuilder.group(Api, "audit", (handlers) =>
  Effect.gen(function* () {
    const registry = yield* PluginRegistry
    const access = yield* Access
    const timeline = yield* Timeline

    return handlers.handle("timeline", ({ path, urlParams }) =>
      Effect.gen(function* () {
        if (Option.isNone(registry.find(path.businessObject))) {
          return yield* new NotFound({ message: `unknown business object: ${path.businessObject}` })
        }
        yield* access.require(path.businessObject, "read")
        const after =
          urlParams.cursor === undefined ? Option.none() : decodeCursor(urlParams.cursor)
        if (urlParams.cursor !== undefined && Option.isNone(after)) {
          return yield* new BadRequest({ message: "cursor: not a cursor from this timeline" })
        }
        const principal = yield* CurrentPrincipal
        return yield* timeline.page(principal.workspace, path.businessObject, path.id, after, urlParams.limit)
      })
    )
  })
)
