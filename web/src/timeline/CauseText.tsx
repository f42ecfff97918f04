import type { Cause } from "../../../src/api/Cause"
import { businessObjectLabel } from "../labels"
import { useTimeline } from "../queries"
import { Link, recordPath } from "../router"
import type { Traceable } from "./causeEntry"
import { findCauseEntry } from "./causeEntry"
import { useNaming } from "../titles/naming"
import { describeActor, describeRecord, describeRevert } from "./describe"
import { OwnCause } from "./TimelineRow"
import type { EntryView } from "./entry"

type Row = EntryView & Traceable

interface Props {
  readonly entry: Row
  /** The rows loaded on this page (newest first): a cause in the same record is usually among them. */
  readonly loaded: ReadonlyArray<Row>
  /** The record this timeline is of: its own rows are "this" record's. */
  readonly recordId: string
}

/** "because Ada Lovelace archived the deal", linking to the deal when it is another record. */
const Because = ({
  cause,
  causing,
  recordId
}: {
  cause: Extract<Cause, { kind: "event" }>
  causing: Row
  recordId: string
}) => {
  const naming = useNaming()
  const label = businessObjectLabel(cause.businessObject).toLowerCase()
  return (
    <span className="cause">
      because {describeActor(causing.actor, naming)} {cause.operation}{" "}
      {cause.businessObjectId === recordId ? (
        `this ${label}`
      ) : (
        <Link to={recordPath(cause.businessObject, cause.businessObjectId)}>
          the {describeRecord(cause.businessObject, cause.businessObjectId, naming.titles)}
        </Link>
      )}
    </span>
  )
}

/** The cause looked up in the newest page of the causing record's timeline (one query per record, cached). */
const LookedUp = ({
  entry,
  recordId,
  cause
}: {
  entry: Row
  recordId: string
  cause: Extract<Cause, { kind: "event" }>
}) => {
  const timeline = useTimeline(cause.businessObject, cause.businessObjectId)
  const causing = timeline.data === undefined ? undefined : findCauseEntry<Row>(entry, timeline.data)
  return causing === undefined ? (
    <OwnCause entry={entry} />
  ) : (
    <Because cause={cause} causing={causing} recordId={recordId} />
  )
}

/**
 * Why a row was written, one level up. A cascade (a listener's or a
 * workflow's write, caused by an event) also says who did what started it:
 * "because Ada Lovelace updated the deal", from the causing row on this page,
 * or else from the newest page of the causing record's timeline.
 */
export const CauseText = ({ entry, loaded, recordId }: Props) => {
  const naming = useNaming(entry.actor)
  const cause = entry.cause
  if (cause?.kind === "action" && cause.revert !== undefined) {
    const { revert } = cause
    const reverted = loaded.find((row) => row.id === revert.entry)
    return <span className="cause">{describeRevert(revert, reverted, naming)}</span>
  }
  if (cause === null || cause.kind !== "event") return <OwnCause entry={entry} />
  const causing = findCauseEntry(entry, loaded)
  if (causing !== undefined) return <Because cause={cause} causing={causing} recordId={recordId} />
  return <LookedUp entry={entry} recordId={recordId} cause={cause} />
}
