import { Schema } from "effect"

/** The two kinds of hint a tab receives (spec, "Broadcast"). */
export const BroadcastType = Schema.Literal("changed", "presence")
export type BroadcastType = typeof BroadcastType.Type

/** What a hint names: a record of a business object. Never the record itself. */
export const BroadcastData = Schema.Struct({
  businessObject: Schema.String,
  businessObjectId: Schema.String
})
export type BroadcastData = typeof BroadcastData.Type

/** One hint as a stream sees it: the SSE event name and its data. */
export class Broadcast extends Schema.Class<Broadcast>("Broadcast")({
  type: BroadcastType,
  data: BroadcastData
}) {}
