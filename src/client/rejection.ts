import { HttpClientError } from "effect/http"
import { Schema, SchemaAST, SchemaIssue } from "effect"
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
const formatter = SchemaIssue.makeFormatterDefault()

/** The schema's complaint, led by the name of the schema that refused (`StoredRecord: ...`) when it has one. */
const formatIssue = (issue: SchemaIssue.Issue): string => {
  const text = formatter(issue)
  if (!("ast" in issue)) return text
  // A route answering one of several schemas refuses with their union: named by its members.
  const names = (SchemaAST.isUnion(issue.ast) ? issue.ast.types : [issue.ast]).flatMap(
    (ast) => SchemaAST.resolveIdentifier(ast) ?? []
  )
  return names.length === 0 ? text : `${names.join(" | ")}: ${text}`
}

export const rejectionOf = (error: unknown, sent: SentRequest | undefined): unknown => {
  if (HttpClientError.isHttpClientError(error)) {
    const reason = error.reason
    switch (reason._tag) {
      // `fetch` rejected: its own error (a network fault) or the ApiError of a non-2xx answer (sendingFetch.ts).
      case "TransportError":
        return reason.cause
      case "EncodeError":
      case "InvalidUrlError":
        return new TypeError(error.message)
    }
    // A 2xx status the route does not declare, or a body that could not be read or does not decode.
    const { method, url } = sent ?? { method: reason.request.method, url: reason.request.url }
    return reason._tag === "DecodeError" && Schema.isSchemaError(reason.cause)
      ? new ResponseShapeError(method, url, formatIssue(reason.cause.issue))
      : new ResponseShapeError(method, url, `${reason._tag.replace(/Error$/, "")}: status ${reason.response.status}`)
  }
  if (Schema.isSchemaError(error)) {
    const issues = formatIssue(error.issue)
    // Unsent: an argument the contract's schema refuses (a limit out of its range), so nothing was asked.
    return sent === undefined
      ? new TypeError(`the request does not fit the contract:\n${issues}`)
      : new ResponseShapeError(sent.method, sent.url, issues)
  }
  return error
}
