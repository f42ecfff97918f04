import type { HttpApiEndpoint, HttpMethod } from "@effect/platform"
import { Schema } from "effect"
import { IfMatch } from "./EntityTag"
import { BadRequest, Conflict, Forbidden, NotFound, PreconditionFailed, UnprocessableEntity } from "./errors"
import { WriteHeaders } from "./IdempotencyKey"

/** The headers of a write on one existing record: `Idempotency-Key` and `If-Match` (lower case, as HttpApi matches them). */
export const ConditionalWriteHeaders = Schema.Struct({
  ...WriteHeaders.fields,
  "if-match": Schema.optionalWith(IfMatch, { exact: true })
})

/**
 * What every route that writes records declares: the optional
 * `Idempotency-Key` header and the refusals a write can meet (bad values,
 * a state that forbids it, missing grants, an unknown record or business
 * object, values over their limits or a reused key).
 */
export const writeEndpoint = <
  Name extends string,
  Method extends HttpMethod.HttpMethod,
  Path,
  UrlParams,
  Payload,
  Success,
  Error,
  R,
  RE
>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, never, Success, Error, R, RE>
) =>
  endpoint
    .setHeaders(WriteHeaders)
    .addError(BadRequest)
    .addError(Conflict)
    .addError(Forbidden)
    .addError(NotFound)
    .addError(UnprocessableEntity)

/**
 * A write on one existing record (update, delete, a lifecycle step, an
 * action): a write endpoint that also takes `If-Match` and may answer 412
 * `PreconditionFailed` when the record has moved on from that version.
 */
export const conditionalWriteEndpoint = <
  Name extends string,
  Method extends HttpMethod.HttpMethod,
  Path,
  UrlParams,
  Payload,
  Success,
  Error,
  R,
  RE
>(
  endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, never, Success, Error, R, RE>
) => writeEndpoint(endpoint).setHeaders(ConditionalWriteHeaders).addError(PreconditionFailed)
