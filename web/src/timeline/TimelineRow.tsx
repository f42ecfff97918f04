import type { ReactNode } from "react"
import { useId } from "react"
import type { Fields } from "../../../src/api/Field"
import { correlationPath, Link } from "../router"
import { ChangesView } from "./ChangesView"
import { ActorName } from "../titles/ActorName"
import { useNaming } from "../titles/naming"
import { TitlesProvider } from "../titles/TitlesContext"
import { causeTechnicalName, describeCause, describeEntryOperation, describeTime } from "./describe"
import type { EntryView } from "./entry"
import type { EntryIndex } from "./entryIndex"
import { isPlain } from "./shape"
import { SnapshotView } from "./SnapshotView"

interface Props {
  readonly entry: EntryView
  /** The record's current fields. */
  readonly fields: Fields
  readonly entries: EntryIndex
  /** Why it was written, when the caller tells it better than the row's own `cause` (a cascade's origin). */
  readonly cause?: ReactNode
  /** What can be done from this entry (view the record as of it, revert to it). */
  readonly actions?: ReactNode
}

/** One audit row: what happened, who, when and why; then the diff, or the snapshot, links by their titles. */
export const TimelineRow = (props: Props) => (
  <TitlesProvider titles={props.entry.titles}>
    <Row {...props} />
  </TitlesProvider>
)

/** Why, as the row's own cause says it; the technical name (an action's, a job's) on hover. */
export const OwnCause = ({ entry }: { readonly entry: EntryView }) => {
  const naming = useNaming(entry.actor)
  return (
    <span className="cause" title={causeTechnicalName(entry.cause)}>
      {describeCause(entry.cause, naming)}
    </span>
  )
}

const Row = ({ entry, fields, entries, cause, actions }: Props) => {
  const headingId = useId()
  const time = describeTime(entry.at)
  return (
    <article className={`timeline-row op-${entry.operation}`} aria-labelledby={headingId}>
      <header>
        <h3 id={headingId}>
          {describeEntryOperation(entry)} by <ActorName actor={entry.actor} />
        </h3>
        <p className="meta">
          <time dateTime={time.iso}>{time.text}</time> · {cause ?? <OwnCause entry={entry} />} ·{" "}
          <Link to={correlationPath(entry.correlationId)} className="correlation-link">
            unit of work
          </Link>
        </p>
      </header>
      {isPlain(entry.changes) ? <ChangesView changes={entry.changes} fields={fields} entries={entries} /> : null}
      {isPlain(entry.record) ? <SnapshotView record={entry.record} fields={fields} /> : null}
      {actions}
    </article>
  )
}
