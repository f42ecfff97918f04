import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { apiErrors, Forbidden, PubSubUnavailable, Unauthorized } from "./errors"

/** The documented body: a long-lived `text/event-stream`. */
// "a string": the answer's description in the document as it has always been.
const EventStream = Schema.String.annotate({ description: "a string" }).pipe(
  HttpApiSchema.asText({ contentType: "text/event-stream" })
)

export class BroadcastApi extends HttpApiGroup.make("broadcast")
  .add(
    HttpApiEndpoint.get("stream", "/broadcast", {
      success: EventStream,
      error: [...apiErrors, Unauthorized, Forbidden, PubSubUnavailable]
    }).annotate(
      OpenApi.Description,
      "Server-Sent Events of the workspace. First `event: resync` (re-read what you show; data: reason and the presence intervals) " +
        "with `retry:`; then hints, `event: changed|presence`, `data: {businessObject, businessObjectId}`, only about business " +
        "objects the user may read; `resync` again after the instance regains its pub/sub subscription; keep-alive comment lines. " +
        "Ends with `event: end` (data: reason: signed-out, session-expired, membership-changed, role-changed, workspace-removed, lifetime) " +
        "or `event: shutdown`, then closes: reconnect. Needs a browser session: an API key gets 403, a dead session 401. " +
        "503 when the shared pub/sub store is unavailable. The contract: docs/broadcast.md."
    )
  )
  .middleware(Authenticated) {}
