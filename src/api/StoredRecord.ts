import { Schema } from "effect"
import { JsonObject } from "./Json"
import { RecordTitles } from "./RecordTitle"

export const RecordState = Schema.Literals(["draft", "operational", "archived"])
export type RecordState = typeof RecordState.Type

/** A record's version: 1 when created, one more with every write that changes it (also its ETag, `"7"`). */
export const RecordVersion = Schema.Int.check(Schema.isGreaterThan(0)).annotate({
  identifier: "RecordVersion",
  description: "1 when created, one more with every write that changes the record; its ETag is the version quoted"
})

/** A record as the API serves it: values in wire form. */
export class StoredRecord extends Schema.Class<StoredRecord>("StoredRecord")({
  id: Schema.String,
  businessObject: Schema.String,
  state: RecordState,
  version: RecordVersion,
  values: JsonObject,
  createdAt: Schema.String,
  updatedAt: Schema.String,
  /** Its title by its business object's rule (every answer of this service has it; older stored answers lack it). */
  title: Schema.optionalKey(Schema.String),
  /** The titles of the records its link values name. */
  titles: Schema.optionalKey(RecordTitles)
}) {}
