import { HttpMiddleware, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Clock, Effect, Exit } from "effect"

const internalError = HttpServerResponse.unsafeJson(
  { _tag: "InternalError", message: "internal error" },
  { status: 500 }
)

/**
 * One structured log line per request (method, path, status, duration), and
 * the last guard for 500s: the cause is logged here, the client gets a
 * generic body, never a stack trace or a SQL message.
 */
export const requestLog = HttpMiddleware.make((app) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = yield* Clock.currentTimeMillis
    const exit = yield* Effect.exit(app)
    const path = request.url.split("?")[0] ?? request.url
    let response: HttpServerResponse.HttpServerResponse
    if (Exit.isSuccess(exit)) {
      response = exit.value
    } else {
      const [fromCause] = yield* HttpServerError.causeResponse(exit.cause)
      response = fromCause.status >= 500 && !Cause.isInterruptedOnly(exit.cause) ? internalError : fromCause
      if (response === internalError) yield* Effect.logError("unhandled failure", exit.cause)
    }
    const durationMs = (yield* Clock.currentTimeMillis) - started
    yield* Effect.logInfo("request").pipe(
      Effect.annotateLogs({ method: request.method, path, status: response.status, durationMs })
    )
    return response
  })
)
