import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { Effect, Layer, Redacted } from "effect"
import { Authenticated, sessionCookie } from "../api/AuthMiddleware"
import { CurrentPrincipal } from "../api/Principal"
import { Authentication } from "../auth/Authentication"

/**
 * The platform tries the session cookie, then the bearer key, and answers
 * with the last failure. So that a caller learns what was wrong with the
 * credential it did send, a request without a bearer key gets the session
 * check's own answer (no cookie, or an expired one).
 */
export const AuthenticatedLive = Layer.effect(
  Authenticated,
  Effect.gen(function* () {
    const authentication = yield* Authentication
    return Authenticated.of({
      session: (httpEffect, { credential }) =>
        Effect.flatMap(authentication.fromSession(credential), (principal) =>
          Effect.provideService(httpEffect, CurrentPrincipal, principal)
        ),
      apiKey: (httpEffect, { credential }) =>
        Effect.flatMap(
          Redacted.value(credential).length > 0
            ? authentication.fromApiKey(credential)
            : Effect.flatMap(HttpApiBuilder.securityDecode(sessionCookie), authentication.fromSession),
          (principal) => Effect.provideService(httpEffect, CurrentPrincipal, principal)
        )
    })
  })
)
