import type { ReactNode } from "react"
import { useId, useMemo } from "react"
import type { Fields } from "../../../src/api/Field"
import type { HydratedAuditEntry } from "../../../src/client"
import { groupByUnit } from "../../../src/client/react"
import { errorMessage } from "../errors"
import { useTimelinePages } from "../queries"
import { CauseText } from "./CauseText"
import type { EntryIndex } from "./entryIndex"
import { indexEntries } from "./entryIndex"
import { TimelineRow } from "./TimelineRow"

interface Props {
  readonly businessObject: string
  readonly id: string
  /** The record's current fields: the order and names rows are shown in. */
  readonly fields: Fields
  /** The record's values now: names collection entries that rows give only by id. */
  readonly current: unknown
  /** What can be done from each entry (view as of it, revert), shown under it. */
  readonly entryActions?: (entry: HydratedAuditEntry) => ReactNode
}

const none: ReadonlyArray<HydratedAuditEntry> = []

interface RowsProps {
  readonly rows: ReadonlyArray<HydratedAuditEntry>
  readonly loaded: ReadonlyArray<HydratedAuditEntry>
  readonly fields: Fields
  readonly entries: EntryIndex
  readonly recordId: string
  readonly entryActions: ((entry: HydratedAuditEntry) => ReactNode) | undefined
}

const Rows = ({ rows, loaded, fields, entries, recordId, entryActions }: RowsProps) =>
  rows.map((entry) => (
    <li key={entry.id}>
      <TimelineRow
        entry={entry}
        fields={fields}
        entries={entries}
        cause={<CauseText entry={entry} loaded={loaded} recordId={recordId} />}
        actions={entryActions?.(entry)}
      />
    </li>
  ))

/**
 * The record's whole audit timeline, newest first: the newest page (50 rows),
 * then "Load older" for the next older page until the record's first entry.
 * Rows of one unit of work (same correlation id and time) are shown together.
 * Refetched on every change to the record.
 */
export const Timeline = ({ businessObject, id, fields, current, entryActions }: Props) => {
  const headingId = useId()
  const timeline = useTimelinePages(businessObject, id)
  const rows = useMemo(() => timeline.data?.pages.flatMap((page) => page.entries) ?? none, [timeline.data])
  const units = useMemo(() => groupByUnit(rows), [rows])
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
          {units.map((unit) =>
            unit.entries.length === 1 ? (
              <Rows
                key={unit.entries[0].id}
                rows={unit.entries}
                loaded={rows}
                fields={fields}
                entries={entries}
                recordId={id}
                entryActions={entryActions}
              />
            ) : (
              <li key={unit.entries[0].id} className="unit">
                <p className="unit-note">{unit.entries.length} changes made together</p>
                <ol className="timeline" aria-label="Changes made together">
                  <Rows
                    rows={unit.entries}
                    loaded={rows}
                    fields={fields}
                    entries={entries}
                    recordId={id}
                    entryActions={entryActions}
                  />
                </ol>
              </li>
            )
          )}
        </ol>
      ) : null}
      {timeline.hasNextPage ? (
        <button
          type="button"
          className="secondary load-older"
          disabled={timeline.isFetchingNextPage}
          onClick={() => void timeline.fetchNextPage()}
        >
          {timeline.isFetchingNextPage ? "Loading older…" : "Load older"}
        </button>
      ) : null}
      {timeline.isFetchNextPageError ? (
        <p className="error" role="alert">
          Older entries cannot be shown: {errorMessage(timeline.error)}
        </p>
      ) : null}
    </section>
  )
}
