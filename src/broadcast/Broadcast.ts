import { Schema } from "effect"
import { BroadcastData, BroadcastType } from "../api/Broadcast"
import { fromJsonText } from "../json/fromJsonText"

/**
 * One hint as it crosses the shared pub/sub channel: `{workspace, type, data}`
 * (decisions.md, "wire details"). `workspace` is the workspace id.
 */
export class BroadcastEnvelope extends Schema.Class<BroadcastEnvelope>("BroadcastEnvelope")({
  workspace: Schema.String,
  type: BroadcastType,
  data: BroadcastData
}) {}

export const BroadcastEnvelopeJson = fromJsonText(BroadcastEnvelope)
