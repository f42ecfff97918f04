import * as Sse from "effect/encoding/Sse"
import type { BroadcastData, BroadcastType } from "../api/Broadcast"

/**
 * One hint as the instance-local fan-out hands it to its streams: the fields,
 * and the SSE event encoded once for every stream of the workspace.
 */
export interface Hint {
  readonly type: BroadcastType
  readonly data: BroadcastData
  /** Two waiting hints with the same key mean the same refetch: a full buffer keeps one. */
  readonly key: string
  /** `event: <type>\ndata: {"businessObject":…,"businessObjectId":…}\n\n` */
  readonly event: Uint8Array
}

export const makeHint = (type: BroadcastType, data: BroadcastData): Hint => ({
  type,
  data,
  key: `${type}\n${data.businessObject}\n${data.businessObjectId}`,
  event: Buffer.from(
    Sse.encoder.write({
      _tag: "Event",
      event: type,
      id: undefined,
      // The wire order of decisions.md, whatever order the fields came in.
      data: JSON.stringify({ businessObject: data.businessObject, businessObjectId: data.businessObjectId })
    })
  )
})
