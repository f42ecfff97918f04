import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { Forbidden, PubSubUnavailable } from "./errors"

/** The documented body: a long-lived `text/event-stream`. */
const EventStream = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" }))

export class BroadcastApi extends HttpApiGroup.make("broadcast")
  .add(
    HttpApiEndpoint.get("stream", "/broadcast")
      .addSuccess(EventStream)
      .addError(Forbidden)
      .addError(PubSubUnavailable)
      .annotate(
        OpenApi.Description,
        "Server-Sent Events of the workspace: `event: changed|presence`, `data: {businessObject, businessObjectId}`, " +
          "keep-alive comment lines. Only hints about business objects the user may read (read once, at open). " +
          "Needs a browser session: an API key gets 403. 503 when the shared pub/sub store is unavailable."
      )
  )
  .middleware(Authenticated) {}
