import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { Forbidden, NotFound } from "./errors"
import { BusinessObjectDefinition } from "./BusinessObjectDefinition"

const IfNoneMatch = Schema.String.annotations({
  identifier: "IfNoneMatch",
  description: "The `ETag` of the list as last fetched: 304 when it has not changed"
})

export class BusinessObjectList extends Schema.Class<BusinessObjectList>("BusinessObjectList")({
  businessObjects: Schema.Array(BusinessObjectDefinition)
}) {}

export class BusinessObjectsApi extends HttpApiGroup.make("businessObjects")
  .add(
    HttpApiEndpoint.get("list", "/business-objects")
      .setHeaders(Schema.Struct({ "if-none-match": Schema.optionalWith(IfNoneMatch, { exact: true }) }))
      .addSuccess(BusinessObjectList)
      .annotate(OpenApi.Summary, "The business object types the caller may read, with their fields")
      .annotate(
        OpenApi.Description,
        "Answers with an `ETag` (a hash of the definitions the caller may read) and `Cache-Control: private, no-cache`; " +
          "sent back as `If-None-Match`, an unchanged list is a 304 without a body."
      )
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
