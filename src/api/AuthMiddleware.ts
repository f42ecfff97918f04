import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "@effect/platform"
import { Unauthorized } from "./errors"
import { CurrentPrincipal } from "./Principal"

/** The session cookie set by `POST /api/auth/login`. */
export const sessionCookie = HttpApiSecurity.apiKey({ in: "cookie", key: "session" }).pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "Browser session, set by POST /api/auth/login")
)

/** `Authorization: Bearer ak_<workspace>.<id>.<secret>`: a service account's API key. */
export const apiKeyBearer = HttpApiSecurity.bearer.pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "API key of a service account, created with `npm run admin -- apikey create`"
  )
)

/**
 * Turns the request's credentials into the `CurrentPrincipal`. Handlers never
 * read cookies or headers themselves.
 */
export class Authenticated extends HttpApiMiddleware.Tag<Authenticated>()("Authenticated", {
  failure: Unauthorized,
  provides: CurrentPrincipal,
  security: { session: sessionCookie, apiKey: apiKeyBearer }
}) {}
