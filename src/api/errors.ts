import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { AuditEntry } from "./AuditEntry"

/**
 * What every error body holds besides its `_tag`: the message, and the id of
 * the request it answers (`X-Request-Id`). The server adds `requestId` to
 * every JSON error as it goes out (src/http/RequestId.ts), so no error is
 * built with it; it is optional here so that the client decodes bodies with
 * and without it.
 */
export const errorFields = {
  message: Schema.String,
  requestId: Schema.optional(Schema.String)
}

/**
 * The errors every route may answer with. Each carries its HTTP status, so the
 * API definition, the OpenAPI document and the client share one source. The
 * wire body is `{ _tag, message, requestId }` (decisions.md, "errors").
 */
export class BadRequest extends Schema.TaggedError<BadRequest>()(
  "BadRequest",
  errorFields,
  HttpApiSchema.annotations({ status: 400 })
) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  errorFields,
  HttpApiSchema.annotations({ status: 401 })
) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  errorFields,
  HttpApiSchema.annotations({ status: 403 })
) {}

export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  errorFields,
  HttpApiSchema.annotations({ status: 404 })
) {}

export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  errorFields,
  HttpApiSchema.annotations({ status: 409 })
) {}

/** The shared publish/subscribe store (Redis) cannot be reached. */
export class PubSubUnavailable extends Schema.TaggedError<PubSubUnavailable>()(
  "PubSubUnavailable",
  errorFields,
  HttpApiSchema.annotations({ status: 503 })
) {}

/** Anything unexpected. The message is generic on purpose: a 500 never leaks internals. */
export class InternalError extends Schema.TaggedError<InternalError>()(
  "InternalError",
  errorFields,
  HttpApiSchema.annotations({ status: 500 })
) {}

/** The request body is over the route's limit (checked before it is read). */
export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()(
  "PayloadTooLarge",
  errorFields,
  HttpApiSchema.annotations({ status: 413 })
) {}

/** A body route got something other than `application/json`. */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()(
  "UnsupportedMediaType",
  errorFields,
  HttpApiSchema.annotations({ status: 415 })
) {}

/** Well-formed but refused: a record over its size limits, an idempotency key reused with another body. */
export class UnprocessableEntity extends Schema.TaggedError<UnprocessableEntity>()(
  "UnprocessableEntity",
  errorFields,
  HttpApiSchema.annotations({ status: 422 })
) {}

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
  HttpApiSchema.annotations({ status: 412 })
) {}

/** How many timeline entries a 412 carries at most. */
export const preconditionEntriesLimit = 100

/** Throttled (login attempts) or over a quota (streams). `retryAfter` (seconds) is also sent as `Retry-After`. */
export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()(
  "TooManyRequests",
  { ...errorFields, retryAfter: Schema.Int },
  HttpApiSchema.annotations({ status: 429 })
) {}

/**
 * The database cannot be reached or did not answer in time. Nothing was
 * changed unless the message says the outcome is unknown (a lost COMMIT).
 * `retryAfter` (seconds) is also sent as `Retry-After`.
 */
export class ServiceUnavailable extends Schema.TaggedError<ServiceUnavailable>()(
  "ServiceUnavailable",
  { ...errorFields, retryAfter: Schema.Int },
  HttpApiSchema.annotations({ status: 503 })
) {}
