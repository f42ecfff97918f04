import { HttpEffect, HttpMethod, HttpServerRequest, HttpServerResponse } from "effect/http"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Option, Result } from "effect"
import type { AppConfigShape } from "../config/AppConfig"
import { BadRequest, Forbidden, PayloadTooLarge, UnsupportedMediaType } from "../api/errors"
import { Api } from "../api/Api"
import { quote } from "../messages/inputExcerpt"
import { readBody } from "./BodyReader"
import { crossSiteRefusal, stateChanging } from "./CrossSite"
import { flawOf, parseJsonBody } from "./JsonBody"
import { routeTable } from "./RouteTable"

/** `application/json`, optionally with `charset=utf-8`; nothing else is a JSON body here. */
const isJson = (contentType: string | undefined) => {
  if (contentType === undefined) return false
  const [type = "", ...parameters] = contentType
    .toLowerCase()
    .split(";")
    .map((part) => part.trim())
  return (
    type === "application/json" &&
    parameters.every((parameter) => !parameter.startsWith("charset=") || /^charset="?utf-8"?$/.test(parameter))
  )
}

/** The answer goes out with `Connection: close`: the client stops sending the rest of its body. */
const closeAfterAnswer = HttpEffect.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "connection", "close"))
)

const tooLarge = (limit: number) =>
  Effect.andThen(
    closeAfterAnswer,
    Effect.fail(new PayloadTooLarge({ message: `the body is over this route's limit of ${limit} bytes` }))
  )

/**
 * `request` with its body already read and parsed: the endpoint's payload
 * decoding (which reads `request.text`) gets it, and the body is never read
 * twice. A prototype-linked copy rather than a wrapper class: the Node
 * server reads the original's private fields (`source`, the response) from
 * whatever request it is handed, and they stay reachable this way.
 */
const withParsedBody = (
  request: HttpServerRequest.HttpServerRequest,
  bytes: Uint8Array,
  json: unknown
): HttpServerRequest.HttpServerRequest => {
  const parsed: HttpServerRequest.HttpServerRequest = Object.create(request)
  const text = Effect.sync(() => new TextDecoder().decode(bytes))
  Object.defineProperties(parsed, {
    text: { value: text },
    json: { value: Effect.succeed(json) },
    arrayBuffer: { value: Effect.sync(() => bytes.slice().buffer) }
  })
  return parsed
}

const pathnameOf = (url: string) => url.split("?")[0] ?? ""

/**
 * Why a path is refused, or none: a segment that, percent-decoded, holds a
 * string the database refuses (a NUL, a lone surrogate), the same check a
 * body's strings get (`JsonBody.ts`). Segments are decoded as the router
 * decodes them; one that is not valid percent-encoding is left to the router
 * (which finds no route for it: 404). `names` gives a route's parameter
 * names by segment, to name the one at fault.
 */
export const pathFlaw = (pathname: string, names: ReadonlyArray<string | undefined> = []): Option.Option<string> => {
  if (!pathname.includes("%")) return Option.none()
  const segments = pathname.split("/").filter((segment) => segment.length > 0)
  for (const [index, segment] of segments.entries()) {
    if (!segment.includes("%")) continue
    let decoded: string
    try {
      decoded = decodeURIComponent(segment)
    } catch {
      continue
    }
    const flaw = flawOf(decoded)
    if (flaw === undefined) continue
    const name = names[index]
    return Option.some(
      name === undefined
        ? `the path segment ${quote(decoded)} ${flaw}`
        : `the path parameter ${name} (${quote(decoded)}) ${flaw}`
    )
  }
  return Option.none()
}

/**
 * The edge every request passes before the router: the ONE place request
 * paths and bodies are checked and bodies read. In order:
 *
 * 1. a path whose segments, percent-decoded, hold a NUL or a lone surrogate
 *    is 400 on every route (`pathFlaw`): no handler sees such a parameter;
 * 2. a state-changing request from a foreign page is 403 (`CrossSite.ts`);
 * 3. a state-changing request with a body that is not `application/json`,
 *    or a JSON route without that content type, is 415;
 * 4. a body over the route's limit (`MAX_BODY_BYTES`, or the endpoint's own
 *    `MaxBodyBytes`) is 413: by `Content-Length` before a byte is read,
 *    else as soon as the streamed bytes pass it; the connection is closed
 *    after the answer. This holds for every route and method: a body sent
 *    where none is taken is read up to the limit and dropped;
 * 5. a JSON route's body is read and parsed here, and refused with 400 when
 *    it is not UTF-8 or JSON, nests deeper than 64 levels, or holds a string
 *    with NUL or a lone surrogate; the endpoint then decodes the parsed value.
 */
export const requestGuard = (config: Pick<AppConfigShape, "allowedOrigins" | "maxBodyBytes">) => {
  const routes = routeTable(Api)
  return <E, R>(
    app: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
  ): Effect.Effect<
    HttpServerResponse.HttpServerResponse,
    E | BadRequest | Forbidden | PayloadTooLarge | UnsupportedMediaType,
    R | HttpServerRequest.HttpServerRequest
  > =>
    Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const pathname = pathnameOf(request.url)
      const route = routes(request.method, pathname)
      const badPath = pathFlaw(pathname, Option.match(route, { onNone: () => [], onSome: (r) => r.params }))
      if (Option.isSome(badPath)) return yield* new BadRequest({ message: badPath.value })

      const refusal = crossSiteRefusal(request, config.allowedOrigins)
      if (Option.isSome(refusal)) return yield* new Forbidden({ message: refusal.value })

      const takesJson = Option.exists(route, (r) => r.hasPayload) && HttpMethod.hasBody(request.method)
      const declared = Number(request.headers["content-length"] ?? "0")
      const hasBody = declared > 0 || request.headers["transfer-encoding"] !== undefined
      const contentType = request.headers["content-type"]
      if ((takesJson || (stateChanging.has(request.method) && hasBody)) && !isJson(contentType)) {
        return yield* new UnsupportedMediaType({
          message:
            contentType === undefined
              ? "the body needs Content-Type: application/json"
              : `the body must be application/json, not ${JSON.stringify(contentType.slice(0, 60))}`
        })
      }

      const limit = Option.getOrElse(
        Option.flatMap(route, (r) => r.maxBodyBytes),
        () => config.maxBodyBytes
      )
      if (declared > limit) return yield* tooLarge(limit)
      if (!takesJson && !hasBody) return yield* app

      const bytes = yield* readBody(NodeHttpServerRequest.toIncomingMessage(request), limit).pipe(
        Effect.catchTags({
          BodyTooLarge: () => tooLarge(limit),
          BodyAborted: () => Effect.fail(new BadRequest({ message: "the body ended before it was complete" }))
        })
      )
      // A body sent to a route that takes none was read (within the limit) only to be dropped.
      if (!takesJson) return yield* app
      const json = parseJsonBody(bytes)
      if (Result.isFailure(json)) return yield* new BadRequest({ message: json.failure })
      return yield* Effect.provideService(
        app,
        HttpServerRequest.HttpServerRequest,
        withParsedBody(request, bytes, json.success)
      )
    })
}
