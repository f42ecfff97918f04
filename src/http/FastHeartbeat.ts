import { Cookies, HttpServerResponse } from "effect/http"
import { Effect, Layer, LogLevel, Metric, Option, Redacted, References } from "effect"
import type { IncomingMessage } from "node:http"
import { CurrentPrincipal } from "../api/Principal"
import { Authentication } from "../auth/Authentication"
import { AppConfig } from "../config/AppConfig"
import { fastRouteAnswers } from "../metrics/ServiceMetrics"
import { crossSiteRefusal } from "./CrossSite"
import { type FastRoute, FastRoutes } from "./FastRoutes"
import { makePresenceActions } from "./handlers/presenceActions"
import { flawOf } from "./JsonBody"
import { currentRequestId, requestIdFrom, requestIdHeader } from "./RequestId"
import { recordRequest, routeLabel } from "./RequestMetrics"
import { securityHeadersOf } from "./SecurityHeaders"

/** `PUT /api/presence/:namespace/:name/:id/:editor`, optionally with a query (ignored, as the stack does). */
const heartbeatPath = /^\/api\/presence\/([^/?#]+)\/([^/?#]+)\/([^/?#]+)\/([^/?#]+)(?:\?.*)?$/

/**
 * The path's parameters decoded as the router decodes them; none when one is
 * not valid percent-encoding or holds what the request guard refuses (a NUL):
 * the stack answers those.
 */
const parametersOf = (match: RegExpExecArray) => {
  try {
    const [namespace, name, id, editor] = match.slice(1, 5).map((segment) => decodeURIComponent(segment))
    return namespace === undefined || name === undefined || id === undefined || editor === undefined
      ? undefined
      : [namespace, name, id, editor].some((parameter) => flawOf(parameter) !== undefined)
        ? undefined
        : { namespace, name, id, editor }
  } catch {
    return undefined
  }
}

const header = (request: IncomingMessage, name: string): string | undefined => {
  const value = request.headers[name]
  return typeof value === "string" ? value : undefined
}

/**
 * The presence heartbeat as a fast route (`FastRoutes`): an open form renews
 * its editor every few seconds, so heartbeats are most of an instance's
 * requests, and the `HttpApi` stack's fixed cost was most of theirs
 * (bench:presence, bench/NOTES.md). It takes only the plain case: a body-less
 * `PUT` that passes the cross-site check, with a session cookie or a bearer
 * key. It authenticates as the `Authenticated` middleware does (the session
 * cookie first), runs the same action as the `HttpApi` handler
 * (`presenceActions.ts`), and answers 204 with what the edge (`Edge.ts`) puts
 * on every answer: the request id, the security headers, the log line and the
 * request metrics. Anything else, or any failure (a refused credential,
 * permission, editor id, missing or archived record, Redis down), goes to
 * the stack, which answers it as it answers every request: a heartbeat that
 * failed changed nothing a second run would not change the same way.
 *
 * With tracing on there is no fast route: every request is then a server span made by the stack.
 */
export const FastHeartbeatLive = Layer.effect(
  FastRoutes,
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.otelEndpoint)) return []
    const authentication = yield* Authentication
    const actions = yield* makePresenceActions
    const context = yield* Effect.context<never>()
    const runFork = Effect.runForkWith(context)
    const answerHeaders = securityHeadersOf(config.hstsMaxAge)("/api/presence", HttpServerResponse.empty())
    const route = routeLabel("PUT", "/api/presence/-/-/-/-")
    const answers = Metric.withAttributes(fastRouteAnswers, { route })

    const heartbeat: FastRoute = (request, response, fallback) => {
      const url = request.url ?? ""
      if (request.method !== "PUT") return false
      const match = heartbeatPath.exec(url)
      if (match === null) return false
      const length = header(request, "content-length")
      if ((length !== undefined && length !== "0") || request.headers["transfer-encoding"] !== undefined) return false
      const path = parametersOf(match)
      if (path === undefined) return false
      const cookies = Cookies.parseHeader(header(request, "cookie") ?? "")
      const head = {
        method: "PUT",
        url,
        headers: {
          host: header(request, "host"),
          origin: header(request, "origin"),
          authorization: header(request, "authorization"),
          "sec-fetch-site": header(request, "sec-fetch-site"),
          "x-forwarded-proto": header(request, "x-forwarded-proto")
        },
        cookies
      }
      if (Option.isSome(crossSiteRefusal(head, config.allowedOrigins))) return false
      // As `Authenticated` reads them: the cookie's value, and whatever follows the 7 characters of `Bearer `.
      const session = cookies.session ?? ""
      const apiKey = (head.headers.authorization ?? "").slice(7)
      if (session === "" && apiKey === "") return false

      const started = process.hrtime.bigint()
      const id = requestIdFrom(header(request, requestIdHeader))
      const principal =
        session !== ""
          ? authentication.fromSession(Redacted.make(session))
          : authentication.fromApiKey(Redacted.make(apiKey))
      const answered = Effect.gen(function* () {
        const status = response.destroyed ? 499 : 204
        if (status === 204) response.writeHead(204, { ...answerHeaders, [requestIdHeader]: id }).end()
        const nanos = process.hrtime.bigint() - started
        recordRequest("PUT", route, status, Number(nanos) / 1e9)
        answers.updateUnsafe(1, context)
        if (LogLevel.isGreaterThanOrEqualTo("Info", yield* References.MinimumLogLevel)) {
          const durationMs = Math.round(Number(nanos / 1_000_000n))
          const pathname = url.split("?")[0] ?? url
          yield* Effect.logInfo("request").pipe(
            Effect.annotateLogs({ requestId: id, method: "PUT", path: pathname, status, durationMs })
          )
        }
      })
      runFork(
        Effect.flatMap(principal, (caller) =>
          Effect.provideService(actions.heartbeat(path), CurrentPrincipal, caller)
        ).pipe(
          Effect.matchCauseEffect({ onFailure: () => Effect.sync(fallback), onSuccess: () => answered }),
          Effect.provideService(currentRequestId, Option.some(id)),
          Effect.annotateLogs("requestId", id)
        )
      )
      return true
    }
    return [heartbeat]
  })
)
