import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Effect, Option, Redacted } from "effect"
import { apiKeyBearer, sessionCookie } from "../api/AuthMiddleware"
import type { StreamEndReason } from "../api/Broadcast"
import { CurrentPrincipal } from "../api/Principal"
import { Authentication } from "../auth/Authentication"
import { readableBusinessObjects } from "../auth/Grants"
import { Roles } from "../auth/Roles"
import { isWorkspaceGone } from "../db/DatabaseFault"
import { Workspaces } from "../tenancy/Workspaces"

/**
 * Asks again whether the credential of a long-lived answer (a feed stream,
 * a long-poll) still admits the same principal with the same readable
 * business objects: none when it does, else why the answer must end. A
 * sign-out, a revoked API key, an expired session or a removed membership
 * is `signed-out`; other grants are `role-changed` (the client comes back
 * and is answered under what it holds now); a dropped workspace is
 * `workspace-removed`. Both lookups go through the
 * instance's caches (docs/security.md, "Caches"), so asking is cheap.
 */
export type AccessRecheck = Effect.Effect<Option.Option<StreamEndReason>>

/**
 * Made once with the handlers; the effect it gives captures the current
 * request's credential and grants: run that in the handler, before the
 * answer outlives the request.
 */
export const makeCaptureAccessRecheck = Effect.gen(function* () {
  const authentication = yield* Authentication
  const roles = yield* Roles
  const workspaces = yield* Workspaces
  return Effect.gen(function* () {
    const principal = yield* CurrentPrincipal
    const bearer = yield* HttpApiBuilder.securityDecode(apiKeyBearer)
    const cookie = yield* HttpApiBuilder.securityDecode(sessionCookie)
    const readableNow = (who: { readonly kind: typeof principal.kind; readonly id: string }) =>
      Effect.map(roles.grantsOf(principal.workspace, who), (grants) => JSON.stringify(readableBusinessObjects(grants)))
    const readable = yield* readableNow(principal)
    // As the authentication middleware does: the bearer key when one is sent, else the session cookie.
    const authenticate =
      Redacted.value(bearer).length > 0 ? authentication.fromApiKey(bearer) : authentication.fromSession(cookie)
    // A credential refused because its workspace is gone: the answer says so rather than "signed out".
    const refusedWhy = Effect.map(workspaces.findBySlug(principal.workspace.slug), (found) =>
      Option.some<StreamEndReason>(
        Option.isSome(found) && found.value.id === principal.workspace.id ? "signed-out" : "workspace-removed"
      )
    )
    const recheck: AccessRecheck = authenticate.pipe(
      Effect.flatMap((again) =>
        again.id !== principal.id || again.workspace.id !== principal.workspace.id
          ? Effect.succeed(Option.some<StreamEndReason>("signed-out"))
          : Effect.map(readableNow(again), (now) =>
              now === readable ? Option.none() : Option.some<StreamEndReason>("role-changed")
            )
      ),
      Effect.catchTag("Unauthorized", () => refusedWhy),
      // The credential was still cached here while its workspace's schema was dropped.
      Effect.catchCause((cause) =>
        isWorkspaceGone(cause)
          ? Effect.succeed(Option.some<StreamEndReason>("workspace-removed"))
          : Effect.failCause(cause)
      )
    )
    return recheck
  })
})
