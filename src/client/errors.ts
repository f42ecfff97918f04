import { parseJson } from "../json/parseJson"
/** The `_tag`s the service answers with (decisions.md, "errors"); any other string is possible from a proxy or a newer server. */
export type ApiErrorTag =
  | "BadRequest"
  | "HttpApiDecodeError"
  | "Unauthorized"
  | "Forbidden"
  | "NotFound"
  | "Conflict"
  | "UnprocessableEntity"
  | "PubSubUnavailable"
  | "InternalError"
  | "UnexpectedResponse"
  | (string & {})

/**
 * A non-2xx answer. `_tag` and `message` come from the JSON error body
 * `{_tag, message}`; `body` is that whole body (a 400 `HttpApiDecodeError`
 * also has `issues`). A body that is not such JSON (a proxy's HTML page, say)
 * gives `_tag: "UnexpectedResponse"` and the status text as message.
 */
export class ApiError extends Error {
  override readonly name = "ApiError"

  constructor(
    readonly status: number,
    readonly _tag: ApiErrorTag,
    message: string,
    readonly body: unknown
  ) {
    super(message)
  }
}

/**
 * A 2xx answer whose body does not match the schema the server declares for
 * it (a proxy, a mismatched server version, a bug): the client fails loudly
 * instead of handing on a wrong shape. `issues` is Effect Schema's report.
 */
export class ResponseShapeError extends Error {
  readonly _tag = "ResponseShapeError"
  override readonly name = "ResponseShapeError"

  constructor(
    readonly method: string,
    readonly url: string,
    readonly issues: string
  ) {
    super(`${method} ${url}: unexpected response shape\n${issues}`)
  }
}

const isErrorBody = (body: unknown): body is { readonly _tag: string; readonly message: string } =>
  typeof body === "object" &&
  body !== null &&
  "_tag" in body &&
  typeof body._tag === "string" &&
  "message" in body &&
  typeof body.message === "string"

/** The ApiError of a non-2xx response (its body is read). */
export const apiErrorOf = async (response: Response): Promise<ApiError> => {
  const text = await response.text().catch(() => "")
  let body: unknown = text
  try {
    body = parseJson(text)
  } catch {
    // not JSON: keep the text
  }
  return isErrorBody(body)
    ? new ApiError(response.status, body._tag, body.message, body)
    : new ApiError(response.status, "UnexpectedResponse", `${response.status} ${response.statusText}`.trim(), body)
}
