import { Schema } from "effect"
import { IfMatch } from "./EntityTag"
import { errorFields } from "./errors"
import { ValuesInput } from "./ValuesInput"

/** The most items one bulk request takes (docs/writes.md, "Bulk writes"). */
export const maxBulkItems = 1_000

/**
 * The body limit of the bulk route, instead of `MAX_BODY_BYTES`: room for
 * `maxBulkItems` records of a few KiB each, still bounded.
 */
export const bulkMaxBodyBytes = 16 * 1024 * 1024

/** A create: the record's values, as the single create's `values`. */
export const BulkCreate = Schema.Struct({ create: ValuesInput }).annotate({ identifier: "BulkCreate" })

/** An update: the record, the fields to change (as the single PATCH's `values`) and, optionally, the version it is made on. */
export const BulkUpdate = Schema.Struct({
  update: Schema.Struct({
    id: Schema.String,
    values: ValuesInput,
    /** As `If-Match`: the version (7), its ETag ("\"7\"") or "*". */
    ifMatch: Schema.optionalKey(Schema.Union([Schema.Int, IfMatch]))
  })
}).annotate({ identifier: "BulkUpdate" })

export const BulkItem = Schema.Union([BulkCreate, BulkUpdate]).annotate({ identifier: "BulkItem" })
export type BulkItem = typeof BulkItem.Type

/** `POST /api/records/:ns/:name/bulk`: 1..1,000 items, written in one unit of work, all or none. */
export class BulkWrite extends Schema.Class<BulkWrite>("BulkWrite")({
  items: Schema.Array(BulkItem)
}) {}

/** A written record as the bulk answer lists it: enough to write it again with `If-Match`. */
export const BulkWrittenRecord = Schema.Struct({
  id: Schema.String,
  version: Schema.Int,
  /** The record's ETag, as a single write's answer would carry it. */
  etag: Schema.String
}).annotate({ identifier: "BulkWrittenRecord" })

/** The records written, in item order. */
export class BulkWritten extends Schema.Class<BulkWritten>("BulkWritten")({
  records: Schema.Array(BulkWrittenRecord)
}) {}

/** Why one item was refused: what a single write of it would have answered (its status, tag and message). */
export const BulkItemError = Schema.Struct({
  /** The item's position in `items`, from 0. */
  index: Schema.Int,
  status: Schema.Int,
  _tag: Schema.String,
  message: Schema.String,
  /** For a stale `ifMatch` (412): the record's version now, null when it was deleted. */
  currentVersion: Schema.optionalKey(Schema.NullOr(Schema.Int))
}).annotate({ identifier: "BulkItemError" })
export type BulkItemError = typeof BulkItemError.Type

/** Some items were refused: nothing of the request was written. `items` lists each refused one, in item order. */
export class BulkRejected extends Schema.TaggedError<BulkRejected>()(
  "BulkRejected",
  { ...errorFields, items: Schema.Array(BulkItemError) },
  { httpApiStatus: 422 }
) {}
