import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer, Redacted } from "effect"
import { Authenticated, sessionCookie } from "../api/AuthMiddleware"
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
    return {
      session: authentication.fromSession,
      apiKey: (key) =>
        Redacted.value(key).length > 0
          ? authentication.fromApiKey(key)
          : Effect.flatMap(HttpApiBuilder.securityDecode(sessionCookie), authentication.fromSession)
    }
  })
)
