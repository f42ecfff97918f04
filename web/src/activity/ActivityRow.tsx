import type { AuditEntry } from "../../../src/api/AuditEntry"
import { businessObjectLabel, shortId } from "../labels"
import { correlationPath, Link, recordPath } from "../router"
import { describeActor, describeCause, describeEntryOperation, describeTime } from "../timeline/describe"

interface Props {
  readonly entry: AuditEntry
  /** Filters the feed by this entry's actor; none: the actor is plain text. */
  readonly onActor?: () => void
}

/** One feed row: what happened to which record, who, when, why, and a link to its unit of work. */
export const ActivityRow = ({ entry, onActor }: Props) => {
  const time = describeTime(entry.at)
  const actor = describeActor(entry.actor)
  return (
    <li className={`activity-row op-${entry.operation}`}>
      <time dateTime={time.iso}>{time.text}</time>
      <span className="what">
        {describeEntryOperation(entry)}
        {entry.operation === "erased" ? " of " : " "}
        {businessObjectLabel(entry.businessObject).toLowerCase()}{" "}
        <Link to={recordPath(entry.businessObject, entry.businessObjectId)} title={entry.businessObjectId}>
          {shortId(entry.businessObjectId)}
        </Link>
      </span>
      <span className="who">
        by{" "}
        {onActor === undefined ? (
          actor
        ) : (
          <button type="button" className="link" onClick={onActor} title="Show only this actor's changes">
            {actor}
          </button>
        )}
      </span>
      <span className="cause">{describeCause(entry.cause)}</span>
      <Link to={correlationPath(entry.correlationId)} className="correlation-link">
        unit of work
      </Link>
    </li>
  )
}
