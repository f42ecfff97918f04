import { HttpBody, HttpServerResponse } from "effect/http"
import { Context, Option } from "effect"
import { randomUUID } from "node:crypto"
import { isJsonObject } from "../api/Json"
import type { Json } from "../api/Json"
import { parseJson } from "../json/parseJson"

/** The header a request id comes in and goes out with. */
export const requestIdHeader = "x-request-id"

/** At most this many characters of an incoming id are taken; a longer one is replaced. */
export const maxRequestIdLength = 128

/** Visible ASCII only: no space, no control character, so the id is safe in a header, a log line and a URL. */
const acceptable = /^[\x21-\x7e]+$/

/**
 * The id a request is known by: the caller's `X-Request-Id` when it is 1-128
 * visible ASCII characters (a proxy or a client chose it, and its logs use
 * it), a new UUID otherwise.
 */
export const requestIdFrom = (incoming: string | undefined, generate: () => string = randomUUID): string =>
  incoming !== undefined && incoming.length <= maxRequestIdLength && acceptable.test(incoming) ? incoming : generate()

/** The id of the request this fiber serves; none outside a request. */
export const currentRequestId = Context.Reference<Option.Option<string>>("RequestId", {
  defaultValue: () => Option.none()
})

const isJsonResponse = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Uint8Array" && (response.body.contentType.split(";")[0] ?? "").trim() === "application/json"

/**
 * `response` with its request id: in the `X-Request-Id` header always, and
 * as `requestId` in the body of a JSON error (status 400 and above, the
 * API's `{ _tag, message, ... }` shape). Every error answer passes here,
 * whoever made it (an endpoint, the request guard, the 404 and 500 of the
 * error mapping, the platform's decode errors), so no error sets it itself.
 */
export const withRequestId = (
  response: HttpServerResponse.HttpServerResponse,
  id: string
): HttpServerResponse.HttpServerResponse => {
  const stamped = HttpServerResponse.setHeader(response, requestIdHeader, id)
  if (response.status < 400 || response.body._tag !== "Uint8Array" || !isJsonResponse(response)) return stamped
  let body: Json
  try {
    body = parseJson(new TextDecoder().decode(response.body.body))
  } catch {
    return stamped
  }
  if (!isJsonObject(body)) return stamped
  return HttpServerResponse.setBody(
    stamped,
    HttpBody.uint8Array(new TextEncoder().encode(JSON.stringify({ ...body, requestId: id })), response.body.contentType)
  )
}
