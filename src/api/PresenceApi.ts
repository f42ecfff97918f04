import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { apiErrors, BadRequest, Conflict, Forbidden, NotFound, PubSubUnavailable } from "./errors"
import { PresenceList } from "./Editor"

const EditorPath = {
  namespace: Schema.String,
  name: Schema.String,
  id: Schema.String,
  editor: Schema.String
}

export class PresenceApi extends HttpApiGroup.make("presence")
  .add(
    HttpApiEndpoint.put("heartbeat", "/presence/:namespace/:name/:id/:editor", {
      params: EditorPath,
      success: HttpApiSchema.NoContent,
      error: [...apiErrors, BadRequest, Conflict, Forbidden, NotFound, PubSubUnavailable]
    }).annotate(
      OpenApi.Summary,
      "Heartbeat of an open form: adds the editor (broadcasts presence) or renews it (silent); needs update permission; " +
        "404 when the record does not exist, 409 when it is archived (the editor is removed)"
    )
  )
  .add(
    HttpApiEndpoint.delete("leave", "/presence/:namespace/:name/:id/:editor", {
      params: EditorPath,
      success: HttpApiSchema.NoContent,
      error: [...apiErrors, BadRequest, Forbidden, NotFound, PubSubUnavailable]
    }).annotate(OpenApi.Summary, "The form closed: removes the editor (broadcasts presence); needs update permission")
  )
  .add(
    HttpApiEndpoint.get("list", "/presence/:namespace/:name", {
      params: { namespace: Schema.String, name: Schema.String },
      success: PresenceList,
      error: [...apiErrors, Forbidden, NotFound, PubSubUnavailable]
    }).annotate(OpenApi.Summary, "Live editors of a business object, grouped by record id; needs read permission")
  )
  .middleware(Authenticated) {}
