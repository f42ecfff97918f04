import * as HttpApiMiddleware from "effect/http-api/HttpApiMiddleware"
import * as HttpApiSecurity from "effect/http-api/HttpApiSecurity"
import * as OpenApi from "effect/http-api/OpenApi"
import { Unauthorized } from "./errors"
import type { CurrentPrincipal } from "./Principal"

/** The session cookie set by `POST /api/auth/login`. */
export const sessionCookie = HttpApiSecurity.apiKey({ in: "cookie", key: "session" }).pipe(
  HttpApiSecurity.annotate(OpenApi.Description, "Browser session, set by POST /api/auth/login")
)

/** `Authorization: Bearer ak_<workspace>.<id>.<secret>`: a service account's API key. */
// The scheme as the OpenAPI document has always spelled it (the server compares it case-insensitively).
export const apiKeyBearer = HttpApiSecurity.http({ scheme: "bearer" }).pipe(
  HttpApiSecurity.annotate(
    OpenApi.Description,
    "API key of a service account, created with `npm run admin -- apikey create`"
  )
)

/**
 * Turns the request's credentials into the `CurrentPrincipal`. Handlers never
 * read cookies or headers themselves.
 */
export class Authenticated extends HttpApiMiddleware.Service<Authenticated, { provides: CurrentPrincipal }>()(
  "Authenticated",
  {
    error: Unauthorized,
    security: { session: sessionCookie, apiKey: apiKeyBearer }
  }
) {}
