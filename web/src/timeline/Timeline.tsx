import { useId, useMemo } from "react"
import type { Fields } from "../../../src/api/Field"
import { errorMessage } from "../errors"
import { useTimeline } from "../queries"
import type { EntryView } from "./entry"
import { indexEntries } from "./entryIndex"
import { TimelineRow } from "./TimelineRow"

interface Props {
  readonly businessObject: string
  readonly id: string
  /** The record's current fields: the order and names rows are shown in. */
  readonly fields: Fields
  /** The record's values now: names collection entries that rows give only by id. */
  readonly current: unknown
}

const none: ReadonlyArray<EntryView> = []

/** The record's audit timeline, newest first (the newest page: 50 rows), refetched on every change to the record. */
export const Timeline = ({ businessObject, id, fields, current }: Props) => {
  const headingId = useId()
  const timeline = useTimeline(businessObject, id)
  const rows: ReadonlyArray<EntryView> = timeline.data ?? none
  const entries = useMemo(() => indexEntries(fields, rows, current), [fields, rows, current])
  return (
    <section className="panel timeline-panel" aria-labelledby={headingId}>
      <h2 id={headingId}>Timeline</h2>
      {timeline.isPending ? <p className="muted">Loading…</p> : null}
      {timeline.isError ? (
        <p className="error" role="alert">
          The timeline cannot be shown: {errorMessage(timeline.error)}
        </p>
      ) : null}
      {timeline.isSuccess && rows.length === 0 ? (
        <p className="muted">No changes yet. A draft has no timeline until it is published.</p>
      ) : null}
      {rows.length > 0 ? (
        <ol className="timeline" aria-label="Timeline entries">
          {rows.map((entry) => (
            <li key={entry.id}>
              <TimelineRow entry={entry} fields={fields} entries={entries} />
            </li>
          ))}
        </ol>
      ) : null}
    </section>
  )
}
