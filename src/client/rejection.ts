import { HttpClientError } from "@effect/platform"
import { ParseResult } from "effect"
import { ResponseShapeError } from "./errors"

/** The request a call sent, as `fetch` got it. */
export interface SentRequest {
  readonly method: string
  readonly url: string
}

/**
 * What a call of the client rejects with, from the failure of the contract's
 * client. `sent` is the request `fetch` was given (undefined when the call
 * failed before sending).
 */
export const rejectionOf = (error: unknown, sent: SentRequest | undefined): unknown => {
  if (HttpClientError.isHttpClientError(error)) {
    if (error._tag === "RequestError") {
      // `fetch` rejected: its own error (a network fault) or the ApiError of a non-2xx answer (sendingFetch.ts).
      return error.reason === "Transport" ? error.cause : new TypeError(error.message)
    }
    // A 2xx status the route does not declare, or a body that could not be read.
    const { method, url } = sent ?? { method: error.request.method, url: error.request.url }
    return new ResponseShapeError(method, url, `${error.reason}: status ${error.response.status}`)
  }
  if (ParseResult.isParseError(error)) {
    const issues = ParseResult.TreeFormatter.formatErrorSync(error)
    // Unsent: an argument the contract's schema refuses (a limit out of its range), so nothing was asked.
    return sent === undefined
      ? new TypeError(`the request does not fit the contract:\n${issues}`)
      : new ResponseShapeError(sent.method, sent.url, issues)
  }
  return error
}
