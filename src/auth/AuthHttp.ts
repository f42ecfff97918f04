import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Duration, Effect } from "effect"
import { AppConfig } from "../config/AppConfig"
import { Api } from "../http/Api"
import { Me } from "./AuthApi"
import { sessionCookie } from "./AuthMiddleware"
import { Authentication } from "./Authentication"
import { CurrentPrincipal } from "./Principal"
import type { Principal } from "./Principal"

const toMe = (principal: Principal) =>
  new Me({
    kind: principal.kind,
    id: principal.id,
    name: principal.name,
    email: principal.email,
    workspace: { id: principal.workspace.id, slug: principal.workspace.slug, name: principal.workspace.name }
  })

/** Secure cookies over HTTPS, whether TLS ends here or at a proxy that says so. */
const servedOverHttps = Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
  const forwarded = request.headers["x-forwarded-proto"]
  return forwarded?.split(",")[0]?.trim() === "https" || request.url.startsWith("https:")
})

export const AuthHttp = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function* () {
    const authentication = yield* Authentication
    const config = yield* AppConfig

    const secureCookie = config.cookieSecure === "auto" ? servedOverHttps : Effect.succeed(config.cookieSecure === "always")

    const setSessionCookie = (token: string, maxAge: Duration.Duration) =>
      Effect.flatMap(secureCookie, (secure) =>
        HttpApiBuilder.securitySetCookie(sessionCookie, token, {
          httpOnly: true,
          sameSite: "lax",
          secure,
          path: "/",
          maxAge
        })
      )

    return handlers
      .handle("login", ({ payload }) =>
        Effect.gen(function* () {
          const { token, principal } = yield* authentication.signIn(payload)
          yield* setSessionCookie(token, config.sessionTtl)
          return toMe(principal)
        })
      )
      .handle("logout", () =>
        Effect.gen(function* () {
          yield* authentication.signOut(yield* CurrentPrincipal)
          yield* setSessionCookie("", Duration.zero)
        })
      )
      .handle("me", () => Effect.map(CurrentPrincipal, toMe))
  })
)
