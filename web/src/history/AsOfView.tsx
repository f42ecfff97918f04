import type { Fields } from "../../../src/api/Field"
import { errorMessage } from "../errors"
import { useRecordAsOf } from "../queries"
import { ActorName } from "../titles/ActorName"
import { TitlesProvider } from "../titles/TitlesContext"
import { describeTime } from "../timeline/describe"
import { isPlain } from "../timeline/shape"
import { SnapshotView } from "../timeline/SnapshotView"

interface Props {
  readonly businessObject: string
  readonly id: string
  /** The timeline entry the record is shown as of. */
  readonly entry: string
  readonly fields: Fields
  /** "deal" */
  readonly typeLabel: string
  readonly onBack: () => void
}

/**
 * The record as it was just after one timeline entry, rebuilt by the
 * service (`?asOf=`): read only, marked as the past, with the way back to
 * the record as it is.
 */
export const AsOfView = ({ businessObject, id, entry, fields, typeLabel, onBack }: Props) => {
  const asOf = useRecordAsOf(businessObject, id, entry)
  const back = (
    <button type="button" className="secondary" onClick={onBack}>
      Back to the current {typeLabel}
    </button>
  )
  if (asOf.isError) {
    return (
      <section className="as-of" aria-label="Record as it was">
        <p className="error" role="alert">
          {errorMessage(asOf.error)}
        </p>
        {back}
      </section>
    )
  }
  if (asOf.data === undefined) return <p className="muted">Loading…</p>
  const { state, values, entry: standsOn, title, titles } = asOf.data
  const time = describeTime(standsOn.at)
  return (
    <section className="as-of" aria-label="Record as it was">
      <p className="as-of-banner" role="status">
        <strong>Read only: the past.</strong> This {typeLabel}
        {title === undefined ? "" : `, "${title}",`} as it was after the change by <ActorName actor={standsOn.actor} />{" "}
        on <time dateTime={time.iso}>{time.text}</time>
        {state === "archived" ? " (archived then)" : ""}.
      </p>
      {back}
      <TitlesProvider titles={titles}>
        {isPlain(values) ? <SnapshotView record={values} fields={fields} /> : null}
      </TitlesProvider>
    </section>
  )
}
