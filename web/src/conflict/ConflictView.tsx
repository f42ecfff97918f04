import { useEffect, useId, useMemo, useRef } from "react"
import type { Fields } from "../../../src/api/Field"
import type { VersionConflictError } from "../../../src/client"
import { conflictFields } from "../../../src/client/react"
import { humanize } from "../labels"
import { describeActor } from "../timeline/describe"
import type { EntryView } from "../timeline/entry"
import { indexEntries } from "../timeline/entryIndex"
import { TimelineRow } from "../timeline/TimelineRow"

interface Props {
  readonly conflict: VersionConflictError
  /** The record's current fields and values: how the entries are shown. */
  readonly fields: Fields
  readonly current: unknown
  /** The fields this page changed (a save's), none for a lifecycle step or an action. */
  readonly mine: ReadonlyArray<string>
  /** What was refused: "Your changes were not saved", "The deal was not archived". */
  readonly refused: string
  /** Sends the same write again on the version the record is at now. */
  readonly onKeepMine: (version: number) => void
  /** Drops this page's write and shows the record as it is now. */
  readonly onTakeTheirs: () => void
  readonly busy: boolean
}

const listOf = (items: ReadonlyArray<string>): string =>
  items.length <= 1 ? (items[0] ?? "") : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`

const whatTheyDid = (operation: string, fields: ReadonlyArray<string>): string => {
  switch (operation) {
    case "updated":
      return `changed ${listOf(fields.map(humanize))}`
    case "created":
      return "created it"
    default:
      return `${operation} it`
  }
}

/**
 * A write refused with 412: who changed what since this page's version
 * (the entries of the 412, newest first, as the timeline shows them), the
 * fields both sides changed, and the two ways on: keep mine (the same write
 * on the new version) or take theirs (drop it, show the record as it is).
 * Each refusal brings it into view and focus: under a long form, or above
 * the Save button the person just pressed, it would otherwise open out of
 * sight (or be pushed out of it by the browser's scroll anchoring).
 */
export const ConflictView = ({ conflict, fields, current, mine, refused, onKeepMine, onTakeTheirs, busy }: Props) => {
  const headingId = useId()
  const summary = useMemo(() => conflictFields(conflict.entries, mine), [conflict, mine])
  const rows: ReadonlyArray<EntryView> = useMemo(() => [...conflict.entries].reverse(), [conflict])
  const index = useMemo(() => indexEntries(fields, rows, current), [fields, rows, current])
  const version = conflict.currentVersion
  const panel = useRef<HTMLElement>(null)
  useEffect(() => {
    if (conflict === undefined) return
    panel.current?.focus({ preventScroll: true })
    panel.current?.scrollIntoView({ block: "start" })
  }, [conflict])
  return (
    <section className="conflict" role="alert" aria-labelledby={headingId} ref={panel} tabIndex={-1}>
      <h3 id={headingId}>Changed since you opened it</h3>
      <p>{refused}: the record was changed in the meantime.</p>
      <ul className="conflict-summary" aria-label="Who changed what">
        {summary.changes.map((change) => (
          <li key={change.entry.id}>
            {describeActor(change.entry.actor)} {whatTheyDid(change.entry.operation, change.fields)}
          </li>
        ))}
      </ul>
      {summary.overlapping.length > 0 ? (
        <p className="overlap">
          You both changed {listOf(summary.overlapping.map(humanize))}: keeping yours replaces theirs.
        </p>
      ) : null}
      {rows.length > 0 ? (
        <ol className="timeline conflict-entries" aria-label="Changes since you opened it">
          {rows.map((entry) => (
            <li key={entry.id}>
              <TimelineRow entry={entry} fields={fields} entries={index} />
            </li>
          ))}
        </ol>
      ) : null}
      {conflict.moreEntries ? <p className="muted">Older changes since then are on the timeline.</p> : null}
      <div className="form-actions">
        {version === null || summary.deleted ? (
          <p className="muted">It has been deleted: there is nothing to keep your changes on.</p>
        ) : (
          <button type="button" disabled={busy} onClick={() => onKeepMine(version)}>
            Keep mine
          </button>
        )}
        <button type="button" className="secondary" disabled={busy} onClick={onTakeTheirs}>
          Take theirs
        </button>
      </div>
    </section>
  )
}
