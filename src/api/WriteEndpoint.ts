import { Schema } from "effect"
import { IfMatch } from "./EntityTag"
import { apiErrors, BadRequest, Conflict, Forbidden, NotFound, PreconditionFailed, UnprocessableEntity } from "./errors"
import { WriteHeaders } from "./IdempotencyKey"

/** The headers of a write on one existing record: `Idempotency-Key` and `If-Match` (lower case, as HttpApi matches them). */
export const ConditionalWriteHeaders = Schema.Struct({
  ...WriteHeaders.fields,
  "if-match": Schema.optionalKey(IfMatch)
})

/**
 * What every route that writes records declares, spread into the endpoint's
 * options: the optional `Idempotency-Key` header and the refusals a write can
 * meet (bad values, a state that forbids it, missing grants, an unknown
 * record or business object, values over their limits or a reused key),
 * besides the errors of every route and the endpoint's own `errors`.
 */
export const writeEndpoint = <const Errors extends ReadonlyArray<Schema.Top> = readonly []>(...errors: Errors) => ({
  headers: WriteHeaders,
  error: [...apiErrors, ...errors, BadRequest, Conflict, Forbidden, NotFound, UnprocessableEntity]
})

/**
 * A write on one existing record (update, delete, a lifecycle step, an
 * action): a write endpoint that also takes `If-Match` and may answer 412
 * `PreconditionFailed` when the record has moved on from that version.
 */
export const conditionalWriteEndpoint = <const Errors extends ReadonlyArray<Schema.Top> = readonly []>(
  ...errors: Errors
) => ({
  headers: ConditionalWriteHeaders,
  error: [...writeEndpoint(...errors).error, PreconditionFailed]
})
