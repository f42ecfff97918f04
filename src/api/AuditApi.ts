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
          "one JSON line each, streamed. The contract: docs/feed.md."
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
  .middleware(Authenticated) {}
