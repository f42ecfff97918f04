import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { apiErrors, Forbidden, TooManyRequests, Unauthorized } from "./errors"
import { MaxBodyBytes } from "./MaxBodyBytes"
import { Authenticated } from "./AuthMiddleware"
import { PrincipalKind } from "./Principal"
import { omittable } from "./Json"

export class SignIn extends Schema.Class<SignIn>("SignIn")({
  workspace: Schema.String,
  email: Schema.String,
  password: Schema.RedactedFromValue(Schema.String)
}) {}

/** The caller as the API shows it. */
export class Me extends Schema.Class<Me>("Me")({
  kind: PrincipalKind,
  id: Schema.String,
  name: Schema.String,
  email: omittable(Schema.String),
  workspace: Schema.Struct({ id: Schema.String, slug: Schema.String, name: Schema.String })
}) {}

/**
 * `GET /api/auth/session`: the session cookie's state, answered 200 either
 * way (`me` null when signed out), so that a page learns it without a
 * failing request; `GET /api/auth/me` stays the 401 for callers that must be
 * signed in.
 */
export class SessionState extends Schema.Class<SessionState>("SessionState")({
  me: Schema.NullOr(Me)
}) {}

export class AuthApi extends HttpApiGroup.make("auth")
  .add(
    HttpApiEndpoint.post("login", "/auth/login", {
      payload: SignIn,
      success: Me,
      error: [...apiErrors, Unauthorized, TooManyRequests]
    })
      .annotate(
        OpenApi.Summary,
        "Sign in to a workspace; sets the HttpOnly session cookie; throttled per account and per client address (429)"
      )
      // Three short strings: 16 KiB is plenty, and an anonymous route should take little.
      .annotate(MaxBodyBytes, 16 * 1024)
  )
  .add(
    HttpApiEndpoint.post("logout", "/auth/logout", { success: HttpApiSchema.NoContent, error: apiErrors })
      .middleware(Authenticated)
      .annotate(OpenApi.Summary, "End the current session; its open broadcast streams end")
  )
  .add(
    HttpApiEndpoint.post("logoutEverywhere", "/auth/logout-everywhere", {
      success: HttpApiSchema.NoContent,
      error: [...apiErrors, Forbidden]
    })
      .middleware(Authenticated)
      .annotate(
        OpenApi.Summary,
        "End every session of the signed-in user, in every workspace; their open broadcast streams end (a session only: an API key gets 403)"
      )
  )
  .add(
    HttpApiEndpoint.get("me", "/auth/me", { success: Me, error: apiErrors })
      .middleware(Authenticated)
      .annotate(OpenApi.Summary, "Who the request is authenticated as")
  )
  .add(
    HttpApiEndpoint.get("session", "/auth/session", { success: SessionState, error: apiErrors }).annotate(
      OpenApi.Summary,
      "The browser session's state: `me` as /auth/me answers it, or null when no live session cookie was sent " +
        "(200 either way: a page asks it on every load, signed out too); API keys use /auth/me"
    )
  ) {}
