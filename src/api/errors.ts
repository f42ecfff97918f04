import { Schema } from "effect"
import { AuditEntry } from "./AuditEntry"
import { omittable } from "./Json"

/**
 * What every error body holds besides its `_tag`: the message, and the id of
 * the request it answers (`X-Request-Id`). The server adds `requestId` to
 * every JSON error as it goes out (src/http/RequestId.ts), so no error is
 * built with it; it is optional here so that the client decodes bodies with
 * and without it.
 */
export const errorFields = {
  message: Schema.String,
  requestId: omittable(Schema.String)
}

/**
 * The errors every route may answer with. Each carries its HTTP status, so the
 * API definition, the OpenAPI document and the client share one source. The
 * wire body is `{ _tag, message, requestId }` (decisions.md, "errors").
 */
export class BadRequest extends Schema.TaggedError<BadRequest>()("BadRequest", errorFields, { httpApiStatus: 400 }) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()("Unauthorized", errorFields, {
  httpApiStatus: 401
}) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", errorFields, { httpApiStatus: 403 }) {}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", errorFields, { httpApiStatus: 404 }) {}

export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", errorFields, { httpApiStatus: 409 }) {}

/** The shared publish/subscribe store (Redis) cannot be reached. */
export class PubSubUnavailable extends Schema.TaggedError<PubSubUnavailable>()("PubSubUnavailable", errorFields, {
  httpApiStatus: 503
}) {}

/** Anything unexpected. The message is generic on purpose: a 500 never leaks internals. */
export class InternalError extends Schema.TaggedError<InternalError>()("InternalError", errorFields, {
  httpApiStatus: 500
}) {}

/** The request body is over the route's limit (checked before it is read). */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", errorFields, {
  httpApiStatus: 413
}) {}

/** A body route got something other than `application/json`. */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  errorFields,
  { httpApiStatus: 415 }
) {}

/** Well-formed but refused: a record over its size limits, an idempotency key reused with another body. */
export class UnprocessableEntity extends Schema.TaggedError<UnprocessableEntity>()("UnprocessableEntity", errorFields, {
  httpApiStatus: 422
}) {}

/**
 * The write named a version (`If-Match`) the record has moved on from:
 * nothing was written. `currentVersion` is the record's version now (null:
 * it was deleted since); `entries` are its timeline entries written since
 * the caller's version, oldest first, at most `preconditionEntriesLimit` of them (the
 * newest); `moreEntries` tells that older ones since that version were left out.
 */
export class PreconditionFailed extends Schema.TaggedError<PreconditionFailed>()(
  "PreconditionFailed",
  {
    ...errorFields,
    currentVersion: Schema.NullOr(Schema.Int),
    entries: Schema.Array(AuditEntry),
    moreEntries: Schema.Boolean
  },
  { httpApiStatus: 412 }
) {}

/** How many timeline entries a 412 carries at most. */
export const preconditionEntriesLimit = 100

/** Throttled (login attempts) or over a quota (streams). `retryAfter` (seconds) is also sent as `Retry-After`. */
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()(
  "TooManyRequests",
  { ...errorFields, retryAfter: Schema.Int },
  { httpApiStatus: 429 }
) {}

/**
 * The database cannot be reached or did not answer in time. Nothing was
 * changed unless the message says the outcome is unknown (a lost COMMIT).
 * `retryAfter` (seconds) is also sent as `Retry-After`.
 */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  { ...errorFields, retryAfter: Schema.Int },
  { httpApiStatus: 503 }
) {}

/** Where in the request an issue is: property names and array indexes. */
const PropertyKey = Schema.Union([
  Schema.String,
  Schema.Finite,
  Schema.Struct({ _tag: Schema.Literal("symbol"), key: Schema.String }).annotate({
    description: "an object to be decoded into a globally shared symbol"
  })
]).annotate({ identifier: "PropertyKey" })

const Issue = Schema.Struct({
  _tag: Schema.Literals([
    "Pointer",
    "Unexpected",
    "Missing",
    "Composite",
    "Refinement",
    "Transformation",
    "Type",
    "Forbidden"
  ]).annotate({ description: "The tag identifying the type of parse issue" }),
  path: Schema.Array(PropertyKey).annotate({ description: "The path to the property where the issue occurred" }),
  message: Schema.String.annotate({ description: "A descriptive message explaining the issue" })
}).annotate({
  identifier: "Issue",
  description: "Represents an error encountered while parsing a value to match the schema"
})

/**
 * A path, query, header or body that does not match the route's schemas: a
 * 400 with the issues (src/http/ErrorResponses.ts). The tag and shape are
 * the ones the API has always answered with (the platform's error of Effect 3).
 */
export class HttpApiDecodeError extends Schema.TaggedError<HttpApiDecodeError>()(
  "HttpApiDecodeError",
  Schema.Struct({ issues: Schema.Array(Issue), message: Schema.String }).annotate({
    description: "The request did not match the expected schema"
  }),
  { httpApiStatus: 400, description: "The request did not match the expected schema" }
) {}

/**
 * The errors any route may answer with, whatever it does (a malformed request,
 * a body over its limit or of another type, missing rights, an overloaded or
 * unreachable database, anything unexpected). Every endpoint declares them
 * besides its own, so that the OpenAPI document lists them and the client
 * decodes them on every route.
 */
export const apiErrors = [
  HttpApiDecodeError,
  BadRequest,
  Forbidden,
  InternalError,
  PayloadTooLarge,
  UnsupportedMediaType,
  UnprocessableEntity,
  ServiceUnavailable
] as const
