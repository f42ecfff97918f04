import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { Forbidden, NotFound } from "./errors"
import { queryLimit } from "./QueryLimit"
import { AsOf, ChangedSince, RecordAsOf, RevertRecord } from "./RecordHistory"
import { StoredRecord } from "./StoredRecord"
import { ValuesInput } from "./ValuesInput"
import { conditionalWriteEndpoint, writeEndpoint } from "./WriteEndpoint"

const TypePath = Schema.Struct({ namespace: Schema.String, name: Schema.String })
const RecordPath = Schema.Struct({ namespace: Schema.String, name: Schema.String, id: Schema.String })

/** Values in wire form; checked against the business object's fields by the service. */
const Values = ValuesInput

/** Records a list answers when the caller names no `limit`. */
export const recordsDefaultLimit = 100

export class CreateRecord extends Schema.Class<CreateRecord>("CreateRecord")({
  values: Values,
  draft: Schema.optionalWith(Schema.Boolean, { default: () => false })
}) {}

export class UpdateRecord extends Schema.Class<UpdateRecord>("UpdateRecord")({
  values: Values
}) {}

export class RecordList extends Schema.Class<RecordList>("RecordList")({
  records: Schema.Array(StoredRecord)
}) {}

export class RunAction extends Schema.Class<RunAction>("RunAction")({
  id: Schema.String
}) {}

const lifecycle = <const Name extends string>(name: Name, summary: string) =>
  conditionalWriteEndpoint(
    HttpApiEndpoint.post(name, `/records/:namespace/:name/:id/${name}`).setPath(RecordPath).addSuccess(StoredRecord)
  ).annotate(OpenApi.Summary, summary)

export class RecordsApi extends HttpApiGroup.make("records")
  .add(
    writeEndpoint(
      HttpApiEndpoint.post("create", "/records/:namespace/:name")
        .setPath(TypePath)
        .setPayload(CreateRecord)
        .addSuccess(StoredRecord, { status: 201 })
    ).annotate(OpenApi.Summary, "Create a record (operational, or a draft with draft: true); needs update permission")
  )
  .add(
    HttpApiEndpoint.get("list", "/records/:namespace/:name")
      .setPath(TypePath)
      .setUrlParams(Schema.Struct({ limit: queryLimit(1, 500, recordsDefaultLimit) }))
      .addSuccess(RecordList)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(
        OpenApi.Summary,
        "The newest records of a business object (limit 1..500, default 100); needs read permission"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/records/:namespace/:name/:id")
      .setPath(RecordPath)
      .setUrlParams(Schema.Struct({ asOf: Schema.optionalWith(AsOf, { exact: true }) }))
      .addSuccess(StoredRecord)
      .addSuccess(RecordAsOf)
      .addError(Forbidden)
      .addError(NotFound)
      .annotate(
        OpenApi.Summary,
        "One record; with `asOf` (an entry id or an instant) the record as it was then, a RecordAsOf; needs read permission"
      )
  )
  .add(
    conditionalWriteEndpoint(
      HttpApiEndpoint.patch("update", "/records/:namespace/:name/:id")
        .setPath(RecordPath)
        .setPayload(UpdateRecord)
        .addSuccess(StoredRecord)
    ).annotate(
      OpenApi.Summary,
      "Change some fields (null clears one; a collection is sent whole, entries keep their ids); needs update permission"
    )
  )
  .add(
    conditionalWriteEndpoint(
      HttpApiEndpoint.del("remove", "/records/:namespace/:name/:id")
        .setPath(RecordPath)
        .addSuccess(HttpApiSchema.NoContent)
    ).annotate(OpenApi.Summary, "Delete a record; needs update permission")
  )
  .add(
    conditionalWriteEndpoint(
      HttpApiEndpoint.post("revert", "/records/:namespace/:name/:id/revert")
        .setPath(RecordPath)
        .setPayload(RevertRecord)
        .addSuccess(StoredRecord)
        .addError(ChangedSince)
    ).annotate(
      OpenApi.Summary,
      "Restore the values as of a timeline entry, or undo one update's changes: one update, its cause naming the entry; needs update permission"
    )
  )
  .add(lifecycle("publish", "Publish a draft: it becomes operational and its timeline opens with created"))
  .add(lifecycle("archive", "Archive an operational record"))
  .add(lifecycle("restore", "Restore an archived record"))
  .add(
    conditionalWriteEndpoint(
      HttpApiEndpoint.post("action", "/actions/:namespace/:name/:action")
        .setPath(Schema.Struct({ namespace: Schema.String, name: Schema.String, action: Schema.String }))
        .setPayload(RunAction)
        .addSuccess(StoredRecord)
    ).annotate(OpenApi.Summary, "Run a plugin action on the record `id`; needs update permission")
  )
  .middleware(Authenticated) {}
