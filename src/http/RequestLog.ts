import { HttpMiddleware, HttpServerError, HttpServerRequest } from "@effect/platform"
import { Clock, Effect, Exit } from "effect"

/** One structured log line per request: method, path, status and duration. */
export const requestLog = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = yield* Clock.currentTimeMillis
    const exit = yield* Effect.exit(app)
    const status = Exit.isSuccess(exit)
      ? exit.value.status
      : (yield* HttpServerError.causeResponse(exit.cause))[0].status
    yield* Effect.logInfo("request").pipe(
      Effect.annotateLogs({
        method: request.method,
        path: request.url.split("?")[0] ?? request.url,
        status,
        durationMs: (yield* Clock.currentTimeMillis) - started
      })
    )
    return yield* exit
  })
)
