import { Schema } from "effect"
import { JsonObject } from "./Json"

export const RecordState = Schema.Literal("draft", "operational", "archived")
export type RecordState = typeof RecordState.Type

/** A record as the API serves it: values in wire form. */
export class StoredRecord extends Schema.Class<StoredRecord>("StoredRecord")({
  id: Schema.String,
  businessObject: Schema.String,
  state: RecordState,
  values: JsonObject,
  createdAt: Schema.String,
  updatedAt: Schema.String
}) {}
