import { Option } from "effect"
import type { UnitMessage } from "./unitMessage"
import { decodeUnitMessage, unitMessagePrefix } from "./unitMessage"

/** What the slot's stream says, as far as the positioner cares (pgoutput's other messages are ignored). */
export type SlotEvent =
  | { readonly tag: "begin" }
  | {
      readonly tag: "message"
      readonly prefix: string
      readonly transactional: boolean
      readonly content: Uint8Array
    }
  | { readonly tag: "commit"; readonly endLsn: bigint; readonly commitMicros: bigint }
  /** The server's keepalive: everything before `lsn` has been sent. */
  | { readonly tag: "keepalive"; readonly lsn: bigint }

/** One decoded transaction that wrote audit rows: its units in the order they flushed. */
export interface DecodedCommit {
  readonly endLsn: bigint
  /** When it committed, in microseconds since 1970 (the server's clock). */
  readonly commitMicros: bigint
  readonly units: ReadonlyArray<UnitMessage>
}

export type Assembled =
  | { readonly tag: "commit"; readonly commit: DecodedCommit }
  /** Nothing of ours is open: the stream is passed up to `lsn` (a commit without units, or a keepalive). */
  | { readonly tag: "passed"; readonly lsn: bigint }
  | { readonly tag: "skipped"; readonly reason: string }

/**
 * Turns the slot's events into whole transactions, in commit order (the
 * order logical decoding sends them). A unit that flushed twice in one
 * transaction (an erasure writes its rows early) is one unit: its hashes in
 * flush order, which is its rows' `seq` order. A keepalive inside a
 * transaction passes nothing: its end is not known yet.
 */
export const makeCommitAssembler = () => {
  let open: Array<UnitMessage> | undefined
  return (event: SlotEvent): Option.Option<Assembled> => {
    switch (event.tag) {
      case "begin":
        open = []
        return Option.none()
      case "message": {
        if (event.prefix !== unitMessagePrefix || !event.transactional) return Option.none()
        const unit = decodeUnitMessage(event.content)
        if (Option.isNone(unit)) {
          return Option.some({ tag: "skipped", reason: "a message under the feed's prefix that is not a unit's" })
        }
        const units = open ?? []
        open = units
        const same = units.findIndex((u) => u.correlationId === unit.value.correlationId)
        const earlier = units[same]
        if (earlier === undefined) units.push(unit.value)
        else units[same] = { ...earlier, contents: [...earlier.contents, ...unit.value.contents] }
        return Option.none()
      }
      case "commit": {
        const units = open ?? []
        open = undefined
        return Option.some(
          units.length === 0
            ? { tag: "passed", lsn: event.endLsn }
            : { tag: "commit", commit: { endLsn: event.endLsn, commitMicros: event.commitMicros, units } }
        )
      }
      case "keepalive":
        return open === undefined ? Option.some({ tag: "passed", lsn: event.lsn }) : Option.none()
    }
  }
}
