import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Effect } from "effect"
import { ServedApi } from "../ServedApi"
import { CurrentPrincipal } from "../../api/Principal"
import { Members } from "../../auth/Members"

/**
 * `/api/members`: only an admin of the caller's workspace may use them (403
 * otherwise). A change checks it in its transaction, under the lock that
 * orders the workspace's member changes.
 */
export const MembersHttp = HttpApiBuilder.group(ServedApi, "members", (handlers) =>
  Effect.gen(function* () {
    const members = yield* Members

    return handlers
      .handle("list", () =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          Effect.andThen(members.requireAdmin(principal), members.list(principal.workspace))
        )
      )
      .handle("remove", ({ params }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          members.remove(principal.workspace, params.userId, principal)
        ).pipe(Effect.asVoid)
      )
      .handle("setRole", ({ params, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          members.setRole(principal.workspace, params.userId, payload.role, principal)
        )
      )
  })
)
