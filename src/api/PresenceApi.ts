import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { BadRequest, Conflict, Forbidden, NotFound, PubSubUnavailable } from "./errors"
import { PresenceList } from "./Editor"

const EditorPath = Schema.Struct({
  namespace: Schema.String,
  name: Schema.String,
  id: Schema.String,
  editor: Schema.String
})

export class PresenceApi extends HttpApiGroup.make("presence")
  .add(
    HttpApiEndpoint.put("heartbeat", "/presence/:namespace/:name/:id/:editor")
      .setPath(EditorPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(BadRequest)
      .addError(Conflict)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(PubSubUnavailable)
      .annotate(
        OpenApi.Summary,
        "Heartbeat of an open form: adds the editor (broadcasts presence) or renews it (silent); needs update permission; " +
          "404 when the record does not exist, 409 when it is archived (the editor is removed)"
      )
  )
  .add(
    HttpApiEndpoint.del("leave", "/presence/:namespace/:name/:id/:editor")
      .setPath(EditorPath)
      .addSuccess(HttpApiSchema.NoContent)
      .addError(BadRequest)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(PubSubUnavailable)
      .annotate(OpenApi.Summary, "The form closed: removes the editor (broadcasts presence); needs update permission")
  )
  .add(
    HttpApiEndpoint.get("list", "/presence/:namespace/:name")
      .setPath(Schema.Struct({ namespace: Schema.String, name: Schema.String }))
      .addSuccess(PresenceList)
      .addError(Forbidden)
      .addError(NotFound)
      .addError(PubSubUnavailable)
      .annotate(OpenApi.Summary, "Live editors of a business object, grouped by record id; needs read permission")
  )
  .middleware(Authenticated) {}
