import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { BadRequest, Forbidden, NotFound } from "./errors"
import { TimelinePage } from "./AuditEntry"
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
  .middleware(Authenticated) {}
