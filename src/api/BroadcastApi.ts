import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { Forbidden, PubSubUnavailable, Unauthorized } from "./errors"

/** The documented body: a long-lived `text/event-stream`. */
const EventStream = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" }))

export class BroadcastApi extends HttpApiGroup.make("broadcast")
  .add(
    HttpApiEndpoint.get("stream", "/broadcast")
      .addSuccess(EventStream)
      .addError(Unauthorized)
      .addError(Forbidden)
      .addError(PubSubUnavailable)
      .annotate(
        OpenApi.Description,
        "Server-Sent Events of the workspace. First `event: resync` (re-read what you show; data: reason and the presence intervals) " +
          "with `retry:`; then hints, `event: changed|presence`, `data: {businessObject, businessObjectId}`, only about business " +
          "objects the user may read; `resync` again after the instance regains its pub/sub subscription; keep-alive comment lines. " +
          "Ends with `event: end` (data: reason: signed-out, session-expired, membership-changed, role-changed, lifetime) " +
          "or `event: shutdown`, then closes: reconnect. Needs a browser session: an API key gets 403, a dead session 401. " +
          "503 when the shared pub/sub store is unavailable. The contract: docs/broadcast.md."
      )
  )
  .middleware(Authenticated) {}
