import { HttpApiBuilder, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option } from "effect"

const internalError = HttpServerResponse.unsafeJson({ _tag: "InternalError", message: "internal error" }, { status: 500 })

const isRouteNotFound = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "RouteNotFound"

/**
 * Answers what no endpoint answered, in the API's JSON error shape: an
 * unknown route is a 404; a defect (a bug, a failed statement, a missing
 * actor) is logged with its cause and answered with a generic 500, never a
 * stack trace or a SQL message. The API's own typed errors pass through to
 * their encoders untouched.
 */
export const ErrorResponsesLive = HttpApiBuilder.middleware((app) =>
  Effect.catchAllCause(app, (cause) =>
    Effect.gen(function* () {
      const failure = Cause.failureOption(cause)
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
