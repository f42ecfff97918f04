import { HttpApiBuilder, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option, Predicate } from "effect"

const internalError = HttpServerResponse.unsafeJson({ _tag: "InternalError", message: "internal error" }, { status: 500 })

/** A failure that says when to come back (429, 503): its `retryAfter` seconds. */
const retryAfterOf = (error: unknown): Option.Option<number> =>
  Predicate.hasProperty(error, "retryAfter") && typeof error.retryAfter === "number" && Number.isFinite(error.retryAfter)
    ? Option.some(Math.max(0, Math.ceil(error.retryAfter)))
    : Option.none()

const isRouteNotFound = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "RouteNotFound"

/**
 * Answers what no endpoint answered, in the API's JSON error shape: an
 * unknown route is a 404; a defect (a bug, a failed statement, a missing
 * actor) is logged with its cause and answered with a generic 500, never a
 * stack trace or a SQL message. The API's own typed errors pass through to
 * their encoders untouched; one that carries `retryAfter` (429, 503) also
 * gets its `Retry-After` header here, so no route sets it by hand.
 */
export const ErrorResponsesLive = HttpApiBuilder.middleware((app) =>
  Effect.catchAllCause(app, (cause) =>
    Effect.gen(function* () {
      const failure = Cause.failureOption(cause)
      const retryAfter = Option.flatMap(failure, retryAfterOf)
      if (Option.isSome(retryAfter)) {
        yield* HttpApp.appendPreResponseHandler((_request, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(retryAfter.value)))
        )
      }
      if (Option.isSome(failure) && isRouteNotFound(failure.value)) {
        const request = yield* HttpServerRequest.HttpServerRequest
        return HttpServerResponse.unsafeJson(
          { _tag: "NotFound", message: `no route for ${request.method} ${request.url.split("?")[0]}` },
          { status: 404 }
        )
      }
      if (Option.isNone(failure) && !Cause.isInterruptedOnly(cause)) {
        yield* Effect.logError("unhandled defect", cause)
        return internalError
      }
      return yield* Effect.failCause(cause)
    })
  )
)
