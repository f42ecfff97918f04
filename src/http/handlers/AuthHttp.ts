import * as HttpApiBuilder from "effect/http-api/HttpApiBuilder"
import { HttpServerRequest } from "effect/http"
import { Duration, Effect, Option } from "effect"
import { AppConfig } from "../../config/AppConfig"
import { ServedApi } from "../ServedApi"
import { Me, SessionState } from "../../api/AuthApi"
import { sessionCookie } from "../../api/AuthMiddleware"
import { Authentication } from "../../auth/Authentication"
import { CurrentPrincipal } from "../../api/Principal"
import type { Principal } from "../../api/Principal"

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

/**
 * The client's address for throttling: the socket's peer, or with
 * `TRUST_PROXY` the last `X-Forwarded-For` entry (the one the proxy in front
 * appended; earlier ones are whatever the client sent).
 */
const clientAddress = (trustProxy: boolean) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) => {
    const forwarded = trustProxy ? request.headers["x-forwarded-for"]?.split(",").at(-1)?.trim() : undefined
    return forwarded !== undefined && forwarded.length > 0 ? forwarded : Option.getOrUndefined(request.remoteAddress)
  })

export const AuthHttp = HttpApiBuilder.group(ServedApi, "auth", (handlers) =>
  Effect.gen(function* () {
    const authentication = yield* Authentication
    const config = yield* AppConfig

    const secureCookie =
      config.cookieSecure === "auto" ? servedOverHttps : Effect.succeed(config.cookieSecure === "always")

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
          const address = yield* clientAddress(config.trustProxy)
          const { token, principal } = yield* authentication.signIn({ ...payload, address })
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
      .handle("logoutEverywhere", () =>
        Effect.gen(function* () {
          yield* authentication.signOutEverywhere(yield* CurrentPrincipal)
          yield* setSessionCookie("", Duration.zero)
        })
      )
      .handle("me", () => Effect.map(CurrentPrincipal, toMe))
      .handle("session", () =>
        HttpApiBuilder.securityDecode(sessionCookie).pipe(
          Effect.flatMap(authentication.fromSession),
          Effect.map((principal) => new SessionState({ me: toMe(principal) })),
          Effect.catchTag("Unauthorized", () => Effect.succeed(new SessionState({ me: null })))
        )
      )
  })
)
