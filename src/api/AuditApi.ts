import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { BadRequest, Forbidden, NotFound, TooManyRequests } from "./errors"
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
import { queryLimit } from "./QueryLimit"

export const timelineDefaultLimit = 50

export class AuditApi extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("timeline", "/audit/business-object/:businessObject/:id")
      .setPath(Schema.Struct({ businessObject: Schema.String, id: Schema.String }))
      .setUrlParams(
        Schema.Struct({
          cursor: Schema.optional(Schema.String),
          limit: queryLimit(1, 200, timelineDefaultLimit)
        })
      )
      .addSuccess(TimelinePage)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(
        OpenApi.Description,
        "A record's audit timeline, newest first. The business object name is URL-encoded (crm%2Fdeal). " +
          "`limit` defaults to 50 and is clamped into 1..200; `cursor` is the previous page's `nextCursor`. Needs read permission."
      )
  )
  .add(
    HttpApiEndpoint.get("feed", "/audit/feed")
      .setUrlParams(FeedParams)
      .addSuccess(FeedPage)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(TooManyRequests)
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
    HttpApiEndpoint.get("correlation", "/audit/correlation/:id")
      .setPath(CorrelationPath)
      .addSuccess(CorrelationView)
      .addError(BadRequest)
      .annotate(
        OpenApi.Description,
        "Every row of one unit of work (its correlation id) and of its cascade (the jobs and workflow runs it " +
          "started, and theirs), grouped by unit and cause in commit order, only of business objects the caller " +
          `may read; at most ${correlationMaxRows} rows (\`truncated\` says when more exist).`
      )
  )
  .middleware(Authenticated) {}
