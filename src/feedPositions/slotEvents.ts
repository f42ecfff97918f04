import type { Pgoutput } from "pg-logical-replication"
import type { SlotEvent } from "./commits"
import { lsnOf } from "./lsn"

/** A pgoutput message as a slot event; none for what the positioner ignores (relations, origins, types). */
export const slotEventOf = (message: Pgoutput.Message): SlotEvent | undefined => {
  switch (message.tag) {
    case "begin":
      return { tag: "begin" }
    case "message":
      return {
        tag: "message",
        prefix: message.prefix,
        transactional: message.transactional,
        content: message.content
      }
    case "commit": {
      const endLsn = message.commitEndLsn === null ? undefined : lsnOf(message.commitEndLsn)
      if (endLsn === undefined) return undefined
      return { tag: "commit", endLsn, commitMicros: BigInt(message.commitTime.toString()) }
    }
    default:
      return undefined
  }
}
