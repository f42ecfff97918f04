import * as HttpApiEndpoint from "effect/http-api/HttpApiEndpoint"
import * as HttpApiGroup from "effect/http-api/HttpApiGroup"
import * as HttpApiSchema from "effect/http-api/HttpApiSchema"
import * as OpenApi from "effect/http-api/OpenApi"
import { Effect, Schema } from "effect"
import { Authenticated } from "./AuthMiddleware"
import { apiErrors, BadRequest, Forbidden, NotFound } from "./errors"
import { queryParameterSchemas } from "./OpenApiDocument"
import { queryLimit, queryLimitDocument } from "./QueryLimit"
import { EraseRecord, ErasedRecord } from "./Erasure"
import { AsOf, ChangedSince, RecordAsOf, RevertRecord } from "./RecordHistory"
import { StoredRecord } from "./StoredRecord"
import { ValuesInput } from "./ValuesInput"
import {
  backlinksDefaultLimit,
  RecordBacklinks,
  RecordList,
  RecordListQuery,
  recordsDefaultLimit,
  searchMaxLength
} from "./RecordQuery"

export { RecordList, recordsDefaultLimit } from "./RecordQuery"
import { BulkRejected, BulkWrite, BulkWritten, bulkMaxBodyBytes } from "./BulkWrite"
import { MaxBodyBytes } from "./MaxBodyBytes"
import { conditionalWriteEndpoint, writeEndpoint } from "./WriteEndpoint"

const TypePath = { namespace: Schema.String, name: Schema.String }
const RecordPath = { namespace: Schema.String, name: Schema.String, id: Schema.String }

/** Values in wire form; checked against the business object's fields by the service. */
const Values = ValuesInput

export class CreateRecord extends Schema.Class<CreateRecord>("CreateRecord")({
  values: Values,
  draft: Schema.Boolean.pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed(false)))
}) {}

export class UpdateRecord extends Schema.Class<UpdateRecord>("UpdateRecord")({
  values: Values
}) {}

export class RunAction extends Schema.Class<RunAction>("RunAction")({
  id: Schema.String
}) {}

const lifecycle = <const Name extends string>(name: Name, summary: string) =>
  HttpApiEndpoint.post(name, `/records/:namespace/:name/:id/${name}`, {
    params: RecordPath,
    success: StoredRecord,
    ...conditionalWriteEndpoint()
  }).annotate(OpenApi.Summary, summary)

export class RecordsApi extends HttpApiGroup.make("records")
  .add(
    HttpApiEndpoint.post("create", "/records/:namespace/:name", {
      params: TypePath,
      payload: CreateRecord,
      success: StoredRecord.pipe(HttpApiSchema.status(201)),
      ...writeEndpoint()
    }).annotate(OpenApi.Summary, "Create a record (operational, or a draft with draft: true); needs update permission")
  )
  .add(
    HttpApiEndpoint.post("bulk", "/records/:namespace/:name/bulk", {
      params: TypePath,
      payload: BulkWrite,
      success: BulkWritten,
      ...writeEndpoint(BulkRejected)
    })
      .annotate(MaxBodyBytes, bulkMaxBodyBytes)
      .annotate(
        OpenApi.Summary,
        "Create and update up to 1,000 records in one unit of work, all or none (422 BulkRejected lists each refused item); needs update permission"
      )
  )
  .add(
    HttpApiEndpoint.get("list", "/records/:namespace/:name", {
      params: TypePath,
      query: RecordListQuery,
      success: RecordList,
      error: [...apiErrors, BadRequest, Forbidden, NotFound]
    })
      .annotate(OpenApi.Transform, queryParameterSchemas({ limit: queryLimitDocument(1, 500, recordsDefaultLimit) }))
      .annotate(
        OpenApi.Summary,
        "A page of the records of a business object, sorted, filtered and searched; needs read permission"
      )
      .annotate(
        OpenApi.Description,
        "`sort`: a column of the business object, `updatedAt` or `createdAt` (default: createdAt, newest first); " +
          "`order`: asc (default when `sort` is given) or desc; empty values sort last either way. " +
          "`filter` (repeatable): `field=value` (equality; `field=` no value), or `field>=value`, `<=`, `>`, `<` " +
          "for numbers, decimals, dates and date-times. " +
          `\`q\`: words the title contains, each a word prefix (at most ${searchMaxLength} characters). ` +
          "`cursor`: the previous page's `nextCursor` (with the same sort, order, filters and q). " +
          "`limit`: 1..500, default 100. A field the business object does not have, or a malformed cursor, is a 400."
      )
  )
  .add(
    HttpApiEndpoint.get("backlinks", "/records/:namespace/:name/:id/links", {
      params: RecordPath,
      query: { limit: queryLimit(1, 100, backlinksDefaultLimit) },
      success: RecordBacklinks,
      error: [...apiErrors, Forbidden, NotFound]
    })
      .annotate(OpenApi.Transform, queryParameterSchemas({ limit: queryLimitDocument(1, 100, backlinksDefaultLimit) }))
      .annotate(
        OpenApi.Summary,
        "The records that link to this one, per business object and link field the caller may read " +
          "(the newest `limit`, 1..100, default 20, and their count); needs read permission"
      )
  )
  .add(
    HttpApiEndpoint.get("get", "/records/:namespace/:name/:id", {
      params: RecordPath,
      query: { asOf: Schema.optionalKey(AsOf) },
      success: [StoredRecord, RecordAsOf],
      error: [...apiErrors, Forbidden, NotFound]
    }).annotate(
      OpenApi.Summary,
      "One record; with `asOf` (an entry id or an instant) the record as it was then, a RecordAsOf; needs read permission"
    )
  )
  .add(
    HttpApiEndpoint.patch("update", "/records/:namespace/:name/:id", {
      params: RecordPath,
      payload: UpdateRecord,
      success: StoredRecord,
      ...conditionalWriteEndpoint()
    }).annotate(
      OpenApi.Summary,
      "Change some fields (null clears one; a collection is sent whole, entries keep their ids); needs update permission"
    )
  )
  .add(
    HttpApiEndpoint.delete("remove", "/records/:namespace/:name/:id", {
      params: RecordPath,
      success: HttpApiSchema.NoContent,
      ...conditionalWriteEndpoint()
    }).annotate(OpenApi.Summary, "Delete a record; needs update permission")
  )
  .add(
    HttpApiEndpoint.post("revert", "/records/:namespace/:name/:id/revert", {
      params: RecordPath,
      payload: RevertRecord,
      success: StoredRecord,
      ...conditionalWriteEndpoint(ChangedSince)
    }).annotate(
      OpenApi.Summary,
      "Restore the values as of a timeline entry, or undo one update's changes: one update, its cause naming the entry; needs update permission"
    )
  )
  .add(
    HttpApiEndpoint.post("erase", "/records/:namespace/:name/:id/erase", {
      params: RecordPath,
      payload: EraseRecord,
      success: ErasedRecord,
      ...conditionalWriteEndpoint()
    }).annotate(
      OpenApi.Summary,
      "Erase values of a record (field paths; none: every value, the record deleted) from every snapshot and diff of its timeline, keeping the ledger verifiable; admins only"
    )
  )
  .add(lifecycle("publish", "Publish a draft: it becomes operational and its timeline opens with created"))
  .add(lifecycle("archive", "Archive an operational record"))
  .add(lifecycle("restore", "Restore an archived record"))
  .add(
    HttpApiEndpoint.post("action", "/actions/:namespace/:name/:action", {
      params: { namespace: Schema.String, name: Schema.String, action: Schema.String },
      payload: RunAction,
      success: StoredRecord,
      ...conditionalWriteEndpoint()
    }).annotate(OpenApi.Summary, "Run a plugin action on the record `id`; needs update permission")
  )
  .middleware(Authenticated) {}
