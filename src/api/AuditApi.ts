import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { apiErrors, BadRequest, Forbidden, NotFound, TooManyRequests } from "./errors"
import { TimelinePage } from "./AuditEntry"
import {
  CorrelationPath,
  CorrelationView,
  correlationMaxRows,
  FeedPage,
  FeedParams,
  feedDefaultLimit,
  feedMaxLimit,
  feedMaxWaitSeconds
} from "./Feed"
import { queryParameterSchemas } from "./OpenApiDocument"
import { queryLimit, queryLimitDocument } from "./QueryLimit"

export const timelineDefaultLimit = 50

/** The name and version of the digest format (docs/ledger.md, "Digests"). */
export const ledgerDigestFormat = "abs-ledger-digest/v1"

const matching = (pattern: RegExp, message: string) => Schema.String.check(Schema.isPattern(pattern, { message }))

/**
 * A workspace's ledger head as a digest (docs/ledger.md, "Digests"): signed,
 * or, where the service has no signing key, the same object without
 * `publicKey` and `signature`. The lines of a file of digests, the answer of
 * `GET /api/audit/digest` and what `admin audit digest` prints.
 */
export const LedgerDigest = Schema.Struct({
  format: Schema.Literal(ledgerDigestFormat),
  workspace: Schema.String,
  schema: Schema.String,
  position: matching(/^(0|[1-9][0-9]{0,18})$/u, "a position is a whole number in decimal"),
  hash: matching(/^[0-9a-f]{64}$/u, "a hash is 64 lower-case hex digits"),
  at: matching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/u, "an instant is ISO-8601 in UTC, to the millisecond"),
  publicKey: Schema.optionalKey(matching(/^[A-Za-z0-9+/]{4,}={0,2}$/u, "a public key is its SPKI DER in base64")),
  signature: Schema.optionalKey(matching(/^[A-Za-z0-9+/]{86}==$/u, "a signature is 64 bytes in base64"))
})
  .check(
    Schema.makeFilter(
      (digest) =>
        (digest.publicKey === undefined) === (digest.signature === undefined) || "publicKey and signature come together"
    )
  )
  .annotate({ identifier: "LedgerDigest" })
export type LedgerDigest = typeof LedgerDigest.Type

export class AuditApi extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("timeline", "/audit/business-object/:businessObject/:id", {
      params: { businessObject: Schema.String, id: Schema.String },
      query: {
        cursor: Schema.optional(Schema.String),
        limit: queryLimit(1, 200, timelineDefaultLimit)
      },
      success: TimelinePage,
      error: [...apiErrors, BadRequest, Forbidden, NotFound]
    })
      .annotate(OpenApi.Transform, queryParameterSchemas({ limit: queryLimitDocument(1, 200, timelineDefaultLimit) }))
      .annotate(
        OpenApi.Description,
        "A record's audit timeline, newest first. The business object name is URL-encoded (crm%2Fdeal). " +
          "`limit` defaults to 50 and is clamped into 1..200; `cursor` is the previous page's `nextCursor`. Needs read permission."
      )
  )
  .add(
    HttpApiEndpoint.get("feed", "/audit/feed", {
      query: FeedParams,
      success: FeedPage,
      error: [...apiErrors, BadRequest, Forbidden, NotFound, TooManyRequests]
    })
      .annotate(
        OpenApi.Transform,
        queryParameterSchemas({
          limit: queryLimitDocument(1, feedMaxLimit, feedDefaultLimit),
          wait: { type: "integer", description: `seconds, clamped into 0..${feedMaxWaitSeconds}` }
        })
      )
      .annotate(
        OpenApi.Description,
        "The workspace change feed: audit rows oldest first, in commit order, after `cursor` (none: from the start), " +
          "only of business objects the caller may read. Filters: `businessObject`, `record`, `actor` (an id, or a " +
          "system actor's name), `correlationId`, `from` (inclusive) and `to` (exclusive) on `at`. " +
          `\`limit\` defaults to ${feedDefaultLimit}, clamped into 1..${feedMaxLimit}. Resume with \`nextCursor\` ` +
          "(always set; `more`: ask again at once). `wait` (seconds, up to " +
          `${feedMaxWaitSeconds}) holds the request until a row is there (long-poll). ` +
          "`Accept: text/event-stream`: an SSE stream of `entry` events whose `id:` is the cursor; reconnecting " +
          "with `Last-Event-ID` goes on from there. `Accept: application/x-ndjson`: every row to the end of the feed, " +
          "one JSON line each, streamed. `order=newest`: the page newest first, backwards from `before` (none: " +
          "the head; go on with `nextCursor` as `before` while `more`), with `head`, the cursor to follow from. " +
          "The contract: docs/feed.md."
      )
  )
  .add(
    HttpApiEndpoint.get("correlation", "/audit/correlation/:id", {
      params: CorrelationPath,
      success: CorrelationView,
      error: [...apiErrors, BadRequest]
    }).annotate(
      OpenApi.Description,
      "Every row of one unit of work (its correlation id) and of its cascade (the jobs and workflow runs it " +
        "started, and theirs), grouped by unit and cause in commit order, only of business objects the caller " +
        `may read; at most ${correlationMaxRows} rows (\`truncated\` says when more exist).`
    )
  )
  .add(
    HttpApiEndpoint.get("digest", "/audit/digest", {
      success: LedgerDigest,
      error: [...apiErrors, Forbidden]
    }).annotate(
      OpenApi.Description,
      "The workspace ledger's head as a digest (docs/ledger.md, \"Digests\"), signed with the service's key; " +
        "without `publicKey` and `signature` where the service has none. Admins only (403 otherwise)."
    )
  )
  .middleware(Authenticated) {}
