import type { ReactNode } from "react"
import { useMemo } from "react"
import type { AuditEntry } from "../../../src/api/AuditEntry"
import type { Fields } from "../../../src/api/Field"
import { businessObjectLabel } from "../labels"
import { correlationPath, Link, recordPath } from "../router"
import { ChangesView } from "../timeline/ChangesView"
import { describeActor, describeCause, describeEntryOperation, describeTime } from "../timeline/describe"
import { indexEntries } from "../timeline/entryIndex"
import { isPlain } from "../timeline/shape"
import { SnapshotView } from "../timeline/SnapshotView"
import { entrySubject } from "./entrySubject"
import { actorTechnicalName } from "../timeline/describe"
import { useNaming } from "../titles/naming"
import { TitlesProvider } from "../titles/TitlesContext"

interface Props {
  readonly entry: AuditEntry
  /** The fields of the row's business object (current schema): the order and names its changes are shown in. */
  readonly fields?: Fields | undefined
  /** Filters the feed by this entry's actor; none: the actor is plain text. */
  readonly onActor?: () => void
  /** Filters the feed by this entry's record; none: no such button. */
  readonly onRecord?: () => void
  /** Why it was written, when the caller tells it better than the row's own cause. */
  readonly cause?: ReactNode
  /** Whether to link to the row's unit of work (not on that unit's own page). */
  readonly unitLink?: boolean
  /** Shown under the row: the rows it caused, on the unit-of-work page. */
  readonly children?: ReactNode
}

const noFields: Fields = {}

/**
 * One feed row: what happened to which record (linking to it), who, when,
 * why, a link to its unit of work; under it what changed, field by field, as
 * the timeline shows it (the values of a created or deleted record).
 */
export const ActivityRow = (props: Props) => (
  <TitlesProvider titles={props.entry.titles}>
    <Row {...props} />
  </TitlesProvider>
)

/** The row inside its titles, so link values, its record and its cause are named by them. */
const Row = ({ entry, fields, onActor, onRecord, cause, unitLink = true, children }: Props) => {
  const naming = useNaming(entry.actor)
  const time = describeTime(entry.at)
  const actor = describeActor(entry.actor, naming)
  const known = fields ?? noFields
  const entries = useMemo(() => indexEntries(known, [entry], undefined), [known, entry])
  return (
    <li className={`activity-row op-${entry.operation}`}>
      <div className="activity-line">
        <time dateTime={time.iso}>{time.text}</time>
        <span className="what">
          {describeEntryOperation(entry)}
          {entry.operation === "erased" ? " of " : " "}
          {businessObjectLabel(entry.businessObject).toLowerCase()}{" "}
          <Link to={recordPath(entry.businessObject, entry.businessObjectId)} title={entry.businessObjectId}>
            {entrySubject(entry)}
          </Link>
        </span>
        {onRecord === undefined ? null : (
          <button
            type="button"
            className="link filter-record"
            onClick={onRecord}
            title="Show only this record's changes"
          >
            only this
          </button>
        )}
        <span className="who">
          by{" "}
          {onActor === undefined ? (
            <span title={actorTechnicalName(entry.actor)}>{actor}</span>
          ) : (
            <button
              type="button"
              className="link"
              onClick={onActor}
              title={`Show only the changes of ${actorTechnicalName(entry.actor)}`}
            >
              {actor}
            </button>
          )}
        </span>
        {cause ?? <span className="cause">{describeCause(entry.cause, naming)}</span>}
        {unitLink ? (
          <Link to={correlationPath(entry.correlationId)} className="correlation-link">
            unit of work
          </Link>
        ) : null}
      </div>
      {isPlain(entry.changes) ? <ChangesView changes={entry.changes} fields={fields} entries={entries} /> : null}
      {isPlain(entry.record) ? <SnapshotView record={entry.record} fields={known} /> : null}
      {children}
    </li>
  )
}
