import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as OpenApi from "effect/http-api/OpenApi"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { apiErrors, Forbidden, NotFound } from "./errors"
import { BusinessObjectDefinition } from "./BusinessObjectDefinition"
import { PluginLabels } from "./RecordTitle"

const IfNoneMatch = Schema.String.annotate({
  identifier: "IfNoneMatch",
  description: "The `ETag` of the list as last fetched: 304 when it has not changed"
})

/**
 * A business object the caller may read, as the list serves it: its
 * definition and whether the caller may also change its records (create,
 * update, delete, lifecycle steps, actions), so a page can leave out the
 * controls it would be refused.
 */
export class ListedBusinessObject extends BusinessObjectDefinition.extend<ListedBusinessObject>("ListedBusinessObject")(
  {
    mayUpdate: Schema.Boolean.annotate({
      description: "Whether the caller holds the update grant on it (create, change, delete, lifecycle steps, actions)"
    })
  }
) {}

export class BusinessObjectList extends Schema.Class<BusinessObjectList>("BusinessObjectList")({
  businessObjects: Schema.Array(ListedBusinessObject),
  /** Human names of the plugins' system actors, jobs, actions and listeners, by technical name. */
  labels: Schema.optionalKey(PluginLabels)
}) {}

export class BusinessObjectsApi extends HttpApiGroup.make("businessObjects")
  .add(
    HttpApiEndpoint.get("list", "/business-objects", {
      headers: { "if-none-match": Schema.optionalKey(IfNoneMatch) },
      success: BusinessObjectList,
      error: apiErrors
    })
      .annotate(
        OpenApi.Summary,
        "The business object types the caller may read, with their fields and whether the caller may update them"
      )
      .annotate(
        OpenApi.Description,
        "Answers with an `ETag` (a hash of the definitions the caller may read) and `Cache-Control: private, no-cache`; " +
          "sent back as `If-None-Match`, an unchanged list is a 304 without a body."
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/business-objects/:businessObject", {
      params: { businessObject: Schema.String },
      success: BusinessObjectDefinition,
      error: [...apiErrors, NotFound, Forbidden]
    }).annotate(OpenApi.Summary, "One business object type (name URL-encoded: crm%2Fdeal); needs read permission")
  )
  .middleware(Authenticated) {}
