import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"

/**
 * The errors every route may answer with. Each carries its HTTP status, so the
 * API definition, the OpenAPI document and the client share one source. The
 * wire body is `{ _tag, message }` (decisions.md, "errors").
 */
export class BadRequest extends Schema.TaggedError<BadRequest>()(
  "BadRequest",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 400 })
) {}

export class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 401 })
) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()(
  "Forbidden",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 403 })
) {}

export class NotFound extends Schema.TaggedError<NotFound>()(
  "NotFound",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 404 })
) {}

export class Conflict extends Schema.TaggedError<Conflict>()(
  "Conflict",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 409 })
) {}

/** The shared publish/subscribe store (Redis) cannot be reached. */
export class PubSubUnavailable extends Schema.TaggedError<PubSubUnavailable>()(
  "PubSubUnavailable",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 503 })
) {}

/** Anything unexpected. The message is generic on purpose: a 500 never leaks internals. */
export class InternalError extends Schema.TaggedError<InternalError>()(
  "InternalError",
  { message: Schema.String },
  HttpApiSchema.annotations({ status: 500 })
) {}
