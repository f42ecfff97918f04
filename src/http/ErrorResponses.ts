import { HttpApiBuilder, HttpApiError, HttpApp, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option, Predicate } from "effect"
import { Api } from "../api/Api"
import { quote, shorten } from "../messages/inputExcerpt"
import { databaseFaultOf } from "../db/DatabaseFault"
import { answerDatabaseFault } from "./serverFaults"

const internalError = HttpServerResponse.unsafeJson(
  { _tag: "InternalError", message: "internal error" },
  { status: 500 }
)

/** A failure that says when to come back (429, 503): its `retryAfter` seconds. */
const retryAfterOf = (error: unknown): Option.Option<number> =>
  Predicate.hasProperty(error, "retryAfter") &&
  typeof error.retryAfter === "number" &&
  Number.isFinite(error.retryAfter)
    ? Option.some(Math.max(0, Math.ceil(error.retryAfter)))
    : Option.none()

const isRouteNotFound = (error: unknown) =>
  typeof error === "object" && error !== null && "_tag" in error && error._tag === "RouteNotFound"

const isDecodeError = (error: unknown): error is HttpApiError.HttpApiDecodeError =>
  error instanceof HttpApiError.HttpApiDecodeError

/**
 * A payload, path or query that did not match its schema, told briefly: the
 * schema formatter quotes the offending value whole (a megabyte string, an
 * object with a thousand keys), the answer quotes a short prefix of each
 * message and key and at most ten issues.
 */
const shortDecodeError = (error: HttpApiError.HttpApiDecodeError) =>
  new HttpApiError.HttpApiDecodeError({
    message: shorten(error.message, 300),
    issues: error.issues.slice(0, 10).map((issue) => ({
      _tag: issue._tag,
      path: issue.path.slice(0, 16).map((key) => (typeof key === "string" && key.length > 40 ? quote(key) : key)),
      message: shorten(issue.message, 200)
    }))
  })

/** The answer the database-fault policy gives to what escaped a route (failed or died); none for a bug. */
const databaseFaultAnswer = (cause: Cause.Cause<unknown>) =>
  Cause.isInterruptedOnly(cause)
    ? Option.none()
    : Option.flatMap(databaseFaultOf(cause), (fault) =>
        Option.map(answerDatabaseFault(fault), (error) => ({ fault, error }))
      )

/**
 * Answers what no endpoint answered, in the API's JSON error shape: an
 * unknown route is a 404; a database fault (lost connection, lock or
 * statement timeout, ...) gets the answer docs/reliability.md gives it, on
 * every route; any other defect (a bug, a missing actor) is logged with its
 * cause and answered with a generic 500, never a stack trace or a SQL
 * message. The API's own typed errors pass through to their encoders
 * untouched; one that carries `retryAfter` (429, 503) also gets its
 * `Retry-After` header here, so no route sets it by hand.
 */
export const ErrorResponsesLive = HttpApiBuilder.middleware(Api, (app) =>
  Effect.catchAllCause(app, (cause) =>
    Effect.gen(function* () {
      const answer = databaseFaultAnswer(cause)
      const failure = Option.isSome(answer) ? Option.some(answer.value.error) : Cause.failureOption(cause)
      const retryAfter = Option.flatMap(failure, retryAfterOf)
      if (Option.isSome(retryAfter)) {
        yield* HttpApp.appendPreResponseHandler((_request, response) =>
          Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(retryAfter.value)))
        )
      }
      if (Option.isSome(answer)) {
        yield* Effect.logWarning(`database fault: ${answer.value.fault.kind}`, cause)
        // The API's error encoder answers the squashed cause, failure and defect
        // alike; this middleware's type admits no failure, so the answer travels as one.
        return yield* Effect.die(answer.value.error)
      }
      if (Option.isSome(failure) && isRouteNotFound(failure.value)) {
        const request = yield* HttpServerRequest.HttpServerRequest
        return HttpServerResponse.unsafeJson(
          {
            _tag: "NotFound",
            message: `no route for ${shorten(request.method, 16)} ${quote(request.url.split("?")[0] ?? "")}`
          },
          { status: 404 }
        )
      }
      const decodeError = Option.filter(failure, isDecodeError)
      if (Option.isSome(decodeError)) return yield* Effect.fail(shortDecodeError(decodeError.value))
      if (Option.isNone(failure) && !Cause.isInterruptedOnly(cause)) {
        yield* Effect.logError("unhandled defect", cause)
        return internalError
      }
      return yield* Effect.failCause(cause)
    })
  )
)
