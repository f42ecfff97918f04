import { HttpApiBuilder, HttpApp, HttpMethod, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { NodeHttpServerRequest } from "@effect/platform-node"
import { Effect, Either, Option } from "effect"
import { AppConfig } from "../config/AppConfig"
import { BadRequest, Forbidden, PayloadTooLarge, UnsupportedMediaType } from "../api/errors"
import { Api } from "../api/Api"
import { readBody } from "./BodyReader"
import { crossSiteRefusal, stateChanging } from "./CrossSite"
import { parseJsonBody } from "./JsonBody"
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
const closeAfterAnswer = HttpApp.appendPreResponseHandler((_request, response) =>
  Effect.succeed(HttpServerResponse.setHeader(response, "connection", "close"))
)

const tooLarge = (limit: number) =>
  Effect.zipRight(
    closeAfterAnswer,
    Effect.fail(new PayloadTooLarge({ message: `the body is over this route's limit of ${limit} bytes` }))
  )

/**
 * `request` with its body already read and parsed: the endpoint's payload
 * decoding (which reads `request.json`) gets `json`, and the body is never
 * read twice. A prototype-linked copy rather than a wrapper class: the Node
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

/**
 * The edge every request passes before the router: the ONE place request
 * bodies are checked and read. In order:
 *
 * 1. a state-changing request from a foreign page is 403 (`CrossSite.ts`);
 * 2. a state-changing request with a body that is not `application/json`,
 *    or a JSON route without that content type, is 415;
 * 3. a body over the route's limit (`MAX_BODY_BYTES`, or the endpoint's own
 *    `MaxBodyBytes`) is 413: by `Content-Length` before a byte is read,
 *    else as soon as the streamed bytes pass it; the connection is closed
 *    after the answer. This holds for every route and method: a body sent
 *    where none is taken is read up to the limit and dropped;
 * 4. a JSON route's body is read and parsed here, and refused with 400 when
 *    it is not UTF-8 or JSON, nests deeper than 64 levels, or holds a string
 *    with NUL or a lone surrogate; the endpoint then decodes the parsed value.
 */
export const RequestGuardLive = HttpApiBuilder.middleware(
  Api,
  Effect.gen(function* () {
    const config = yield* AppConfig
    const routes = routeTable(Api)
    const guard: HttpApiBuilder.MiddlewareFn<BadRequest | Forbidden | PayloadTooLarge | UnsupportedMediaType> = (app) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const refusal = crossSiteRefusal(request, config.allowedOrigins)
        if (Option.isSome(refusal)) return yield* new Forbidden({ message: refusal.value })

        const route = routes(request.method, request.url.split("?")[0] ?? "")
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
        if (Either.isLeft(json)) return yield* new BadRequest({ message: json.left })
        return yield* Effect.provideService(
          app,
          HttpServerRequest.HttpServerRequest,
          withParsedBody(request, bytes, json.right)
        )
      })
    return guard
  })
)
