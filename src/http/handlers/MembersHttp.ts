import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../api/Api"
import { CurrentPrincipal } from "../../api/Principal"
import { Members } from "../../auth/Members"

/** `/api/members`: every route first checks that the caller is an admin of its workspace (403 otherwise). */
export const MembersHttp = HttpApiBuilder.group(Api, "members", (handlers) =>
  Effect.gen(function* () {
    const members = yield* Members

    const asAdmin = Effect.flatMap(CurrentPrincipal, (principal) =>
      Effect.as(members.requireAdmin(principal), principal.workspace)
    )

    return handlers
      .handle("list", () => Effect.flatMap(asAdmin, members.list))
      .handle("remove", ({ path }) =>
        Effect.flatMap(asAdmin, (workspace) => members.remove(workspace, path.userId)).pipe(Effect.asVoid)
      )
      .handle("setRole", ({ path, payload }) =>
        Effect.flatMap(asAdmin, (workspace) => members.setRole(workspace, path.userId, payload.role))
      )
  })
)
