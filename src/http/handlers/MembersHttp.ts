import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../api/Api"
import { CurrentPrincipal } from "../../api/Principal"
import { Members } from "../../auth/Members"

/**
 * `/api/members`: only an admin of the caller's workspace may use them (403
 * otherwise). A change checks it in its transaction, under the lock that
 * orders the workspace's member changes.
 */
export const MembersHttp = HttpApiBuilder.group(Api, "members", (handlers) =>
  Effect.gen(function* () {
    const members = yield* Members

    return handlers
      .handle("list", () =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          Effect.zipRight(members.requireAdmin(principal), members.list(principal.workspace))
        )
      )
      .handle("remove", ({ path }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          members.remove(principal.workspace, path.userId, principal)
        ).pipe(Effect.asVoid)
      )
      .handle("setRole", ({ path, payload }) =>
        Effect.flatMap(CurrentPrincipal, (principal) =>
          members.setRole(principal.workspace, path.userId, payload.role, principal)
        )
      )
  })
)
