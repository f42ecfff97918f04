import { HttpApiBuilder } from "@effect/platform"
import { Effect, Option } from "effect"
import { BusinessObjectGuard } from "../../auth/BusinessObjectGuard"
import { BadRequest } from "../../api/errors"
import { Api } from "../../api/Api"
import { decodeCursor } from "../../audit/Cursor"
import { Timeline } from "../../audit/Timeline"

export const AuditHttp = HttpApiBuilder.group(Api, "audit", (handlers) =>
  Effect.gen(function* () {
    const guard = yield* BusinessObjectGuard
    const timeline = yield* Timeline

    return handlers.handle("timeline", ({ path, urlParams }) =>
      Effect.gen(function* () {
        const { principal } = yield* guard.require(path.businessObject, "read")
        const after = urlParams.cursor === undefined ? Option.none() : decodeCursor(urlParams.cursor)
        if (urlParams.cursor !== undefined && Option.isNone(after)) {
          return yield* new BadRequest({ message: "cursor: not a cursor from this timeline" })
        }
        return yield* timeline.page(principal.workspace, path.businessObject, path.id, after, urlParams.limit)
      })
    )
  })
)
