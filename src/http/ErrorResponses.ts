import * as HttpApiError from "effect/http-api/HttpApiError"
import { HttpServerError, HttpServerRequest, HttpServerRespondable, HttpServerResponse } from "effect/http"
import { Cause, Effect, Option, Predicate, Schema, SchemaAST, SchemaIssue } from "effect"
import {
  BadRequest,
  Conflict,
  Forbidden,
  InternalError,
  NotFound,
  PayloadTooLarge,
  PreconditionFailed,
  PubSubUnavailable,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
  UnprocessableEntity,
  UnsupportedMediaType
} from "../api/errors"
import { quote, shorten } from "../messages/inputExcerpt"
import { databaseFaultOf } from "../db/DatabaseFault"
import { answerDatabaseFault } from "./serverFaults"
import { parseJson } from "../json/parseJson"

const internalError = HttpServerResponse.jsonUnsafe(
  { _tag: "InternalError", message: "internal error" },
  { status: 500 }
)

/**
 * The API's errors with their status, for what fails outside an endpoint
 * (the request guard, a database fault): an endpoint encodes its own
 * declared errors itself.
 */
const statusOf = SchemaAST.resolveAt<number>("httpApiStatus")

const apiErrorEncoders = [
  BadRequest,
  Unauthorized,
  Forbidden,
  NotFound,
  Conflict,
  PreconditionFailed,
  PayloadTooLarge,
  UnsupportedMediaType,
  UnprocessableEntity,
  TooManyRequests,
  InternalError,
  ServiceUnavailable,
  PubSubUnavailable
].map((schema) => ({
  is: Schema.is(schema),
  encode: Schema.encodeUnknownEffect(schema),
  // The status each error declares for the API (src/api/errors.ts), read once.
  status: statusOf(schema.ast) ?? 500
}))

/** `error` as the API answers it (`{ _tag, message, ... }` with its status), when it is one of the API's errors. */
const apiErrorResponse = (error: unknown) => {
  const encoder = apiErrorEncoders.find((candidate) => candidate.is(error))
  if (encoder === undefined) return Option.none()
  return Option.some(
    Effect.map(Effect.orDie(encoder.encode(error)), (body) =>
      HttpServerResponse.jsonUnsafe(body, { status: encoder.status })
    )
  )
}

const isRouteNotFound = (error: unknown) =>
  (HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound") ||
  error instanceof HttpServerError.RouteNotFound

const issueFormatter = SchemaIssue.makeFormatterStandardSchemaV1()

type IssueTag = "Type" | "Missing" | "Unexpected" | "Refinement" | "Transformation" | "Forbidden"

/**
 * The kind of each issue the formatter lists, in its order (the same walk as
 * its own), by the tags the API's `Issue` has always carried: a value of the
 * wrong type, a missing or unexpected key, a failed check, a failed
 * transformation, a forbidden operation.
 */
const issueTags = (issue: SchemaIssue.Issue, inEncoding = false): Array<IssueTag> => {
  switch (issue._tag) {
    case "Filter":
    case "Pointer":
      return issueTags(issue.issue, inEncoding)
    case "Encoding":
      return issueTags(issue.issue, true)
    case "Composite":
      return issue.issues.flatMap((inner) => issueTags(inner, inEncoding))
    case "AnyOf":
      return issue.issues.length > 0 ? issue.issues.flatMap((inner) => issueTags(inner, inEncoding)) : ["Type"]
    case "MissingKey":
      return ["Missing"]
    case "UnexpectedKey":
      return ["Unexpected"]
    case "Forbidden":
      return ["Forbidden"]
    case "InvalidValue":
      return [inEncoding ? "Transformation" : "Refinement"]
    case "InvalidType":
    case "OneOf":
      return ["Type"]
  }
}

/**
 * A path, query, header or payload that did not match its schema, told
 * briefly as the platform's `HttpApiDecodeError` (the tag the API has always
 * answered with): the schema formatter quotes the offending value whole (a
 * megabyte string, an object with a thousand keys), the answer quotes a
 * short prefix of each message and key and at most ten issues.
 */
const decodeErrorResponse = (error: HttpApiError.HttpApiSchemaError) => {
  const tags = issueTags(error.cause.issue)
  return HttpServerResponse.jsonUnsafe(
    {
      _tag: "HttpApiDecodeError",
      message: shorten(error.cause.message, 300),
      issues: issueFormatter(error.cause.issue)
        .issues.slice(0, 10)
        .map((issue, index) => ({
          _tag: tags[index] ?? "Type",
          path: (issue.path ?? []).slice(0, 16).map((segment) => {
            const key = typeof segment === "object" ? segment.key : segment
            return typeof key === "string"
              ? key.length > 40
                ? quote(key)
                : key
              : typeof key === "number"
                ? key
                : String(key)
          }),
          message: shorten(issue.message, 200)
        }))
    },
    { status: 400 }
  )
}

/** A request that did not decode (400); a response that did not encode is a bug (500). */
const isRequestDecodeError = (error: HttpApiError.HttpApiSchemaError) =>
  error.kind !== "Body" && error.kind !== "ResponseHeaders"

/** The answer the database-fault policy gives to what escaped a route (failed or died); none for a bug. */
const databaseFaultAnswer = (cause: Cause.Cause<unknown>) =>
  Cause.hasInterruptsOnly(cause)
    ? Option.none()
    : Option.flatMap(databaseFaultOf(cause), (fault) =>
        Option.map(answerDatabaseFault(fault), (error) => ({ fault, error }))
      )

/**
 * `cause` with each failure an endpoint did not declare as the failure it
 * was: v4's endpoint encoder dies with the encoding's `SchemaError` instead,
 * holding the failure as its input (v3 let it through as a failure). A SQL
 * error that escaped a handler so still gets the database-fault answer.
 */
const undeclaredAsFailures = (cause: Cause.Cause<unknown>): Cause.Cause<unknown> =>
  Cause.fromReasons(
    cause.reasons.map((reason) =>
      reason._tag === "Die" &&
      Schema.isSchemaError(reason.defect) &&
      SchemaIssue.hasInput(reason.defect.issue) &&
      Predicate.isError(reason.defect.issue.input)
        ? Cause.makeFailReason(reason.defect.issue.input)
        : reason
    )
  )

/** The defect a cause died with, if it died. */
const defectOf = (cause: Cause.Cause<unknown>): Option.Option<unknown> => {
  for (const reason of cause.reasons) if (reason._tag === "Die") return Option.some(reason.defect)
  return Option.none()
}

/**
 * Answers what no endpoint answered, in the API's JSON error shape: an
 * unknown route is a 404; a request that does not decode (path, query,
 * headers, payload) is a 400 `HttpApiDecodeError`; a failure of the request
 * guard is its API error; a database fault (lost connection, lock or
 * statement timeout, ...) gets the answer docs/reliability.md gives it, on
 * every route; any other defect (a bug, a missing actor) is logged with its
 * cause and answered with a generic 500, never a stack trace or a SQL
 * message. What an endpoint answered (its own errors included) passes
 * untouched; so does an interruption, and a failure the platform answers
 * itself (its own `Respondable` errors). Applied to every route (Server.ts).
 */
export const errorResponses = <E, R>(
  app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
): Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest> =>
  Effect.catchCause(app, (original) =>
    Effect.gen(function* () {
      if (Cause.hasInterruptsOnly(original)) return yield* Effect.failCause(original)
      const cause = undeclaredAsFailures(original)
      const answer = databaseFaultAnswer(cause)
      if (Option.isSome(answer)) {
        // A request of a workspace dropped under it is the client's news, not the service's fault.
        yield* answer.value.fault.kind === "workspace-gone"
          ? Effect.logInfo("request of a workspace dropped meanwhile")
          : Effect.logWarning(`database fault: ${answer.value.fault.kind}`, cause)
        const response = apiErrorResponse(answer.value.error)
        if (Option.isSome(response)) return yield* response.value
      }
      const failure = Cause.findErrorOption(cause)
      if (Option.isSome(failure)) {
        if (isRouteNotFound(failure.value)) {
          const request = yield* HttpServerRequest.HttpServerRequest
          return HttpServerResponse.jsonUnsafe(
            {
              _tag: "NotFound",
              message: `no route for ${shorten(request.method, 16)} ${quote(request.url.split("?")[0] ?? "")}`
            },
            { status: 404 }
          )
        }
        const response = apiErrorResponse(failure.value)
        if (Option.isSome(response)) return yield* response.value
        if (HttpServerRespondable.isRespondable(failure.value)) return yield* Effect.failCause(original)
      }
      const defect = defectOf(cause)
      if (Option.isSome(defect) && HttpApiError.HttpApiSchemaError.is(defect.value)) {
        if (isRequestDecodeError(defect.value)) return decodeErrorResponse(defect.value)
      } else if (Option.isSome(defect) && HttpServerResponse.isHttpServerResponse(defect.value)) {
        return defect.value
      }
      yield* Effect.logError("unhandled defect", cause)
      return internalError
    })
  )

/**
 * A JSON error answer that carries `retryAfter` (429, 503) with its
 * `Retry-After` header, whoever made it (an endpoint's encoder, the guard,
 * the database-fault policy), so no route sets it by hand.
 */
export const withRetryAfter = (
  response: HttpServerResponse.HttpServerResponse
): HttpServerResponse.HttpServerResponse => {
  if ((response.status !== 429 && response.status !== 503) || response.body._tag !== "Uint8Array") return response
  let body: unknown
  try {
    body = parseJson(new TextDecoder().decode(response.body.body))
  } catch {
    return response
  }
  if (!Predicate.hasProperty(body, "retryAfter") || typeof body.retryAfter !== "number") return response
  if (!Number.isFinite(body.retryAfter)) return response
  return HttpServerResponse.setHeader(response, "retry-after", String(Math.max(0, Math.ceil(body.retryAfter))))
}
