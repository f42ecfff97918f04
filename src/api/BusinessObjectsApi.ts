import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { Forbidden, NotFound } from "./errors"
import { BusinessObjectDefinition } from "./BusinessObjectDefinition"

export class BusinessObjectList extends Schema.Class<BusinessObjectList>("BusinessObjectList")({
  businessObjects: Schema.Array(BusinessObjectDefinition)
}) {}

export class BusinessObjectsApi extends HttpApiGroup.make("businessObjects")
  .add(
    HttpApiEndpoint.get("list", "/business-objects")
      .addSuccess(BusinessObjectList)
      .annotate(OpenApi.Summary, "The business object types the caller may read, with their fields")
  )
  .add(
    HttpApiEndpoint.get("get", "/business-objects/:businessObject")
      .setPath(Schema.Struct({ businessObject: Schema.String }))
      .addSuccess(BusinessObjectDefinition)
      .addError(NotFound)
      .addError(Forbidden)
      .annotate(OpenApi.Summary, "One business object type (name URL-encoded: crm%2Fdeal); needs read permission")
  )
  .middleware(Authenticated) {}
