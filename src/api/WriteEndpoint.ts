import type { HttpApiEndpoint, HttpMethod } from "@effect/platform"
import { BadRequest, Conflict, Forbidden, NotFound, UnprocessableEntity } from "./errors"
import { WriteHeaders } from "./IdempotencyKey"

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
