import { useState } from "react"
import type { RevertMode } from "../../../src/api/Cause"
import type { StoredRecord } from "../../../src/client"
import { ChangedSinceError } from "../../../src/client"
import { errorMessage } from "../errors"
import { humanize } from "../labels"
import { useNewestEntryId, useRevertRecord } from "../queries"
import type { EntryView } from "../timeline/entry"

interface Props {
  readonly businessObject: string
  readonly entry: EntryView
  /** The record as shown: reverts are made on its version (`If-Match`). */
  readonly record: StoredRecord
  /** The viewer may update the record now (the update grant, and it is operational). */
  readonly mayRevert: boolean
  readonly onViewAsOf: (entry: string) => void
  /** "deal" */
  readonly typeLabel: string
}

const question: Record<RevertMode, (typeLabel: string) => string> = {
  restore: (typeLabel) => `Put every field of this ${typeLabel} back to how it was after this entry?`,
  undo: () => "Take back this change's fields, and only those?"
}

/**
 * What can be done from one timeline entry: view the record as of it; and,
 * for a viewer who may update the record, revert to it (not to the newest
 * entry: the record is as it left it) or undo it (an update only), each
 * after a confirmation. An undo of fields changed again
 * since names them and offers to undo anyway (`force`).
 */
export const EntryActions = ({ businessObject, entry, record, mayRevert, onViewAsOf, typeLabel }: Props) => {
  const revert = useRevertRecord(businessObject)
  const [confirming, setConfirming] = useState<RevertMode | undefined>(undefined)
  const newest = useNewestEntryId(businessObject, record.id) === entry.id
  if (entry.operation === "deleted") return null
  const run = (mode: RevertMode, force = false) =>
    revert.mutate(
      { id: record.id, revert: { entry: entry.id, mode, force }, ifMatch: record.version },
      { onSuccess: () => setConfirming(undefined) }
    )
  const cancel = () => {
    setConfirming(undefined)
    revert.reset()
  }
  const changedSince = revert.error instanceof ChangedSinceError ? revert.error : undefined
  const busy = revert.isPending
  return (
    <div className="entry-actions">
      <button type="button" className="link" onClick={() => onViewAsOf(entry.id)}>
        View as of this entry
      </button>
      {mayRevert && !newest ? (
        <button type="button" className="link" onClick={() => setConfirming("restore")} disabled={busy}>
          Revert to here
        </button>
      ) : null}
      {mayRevert && entry.operation === "updated" ? (
        <button type="button" className="link" onClick={() => setConfirming("undo")} disabled={busy}>
          Undo this change
        </button>
      ) : null}
      {confirming !== undefined && changedSince === undefined ? (
        <span
          className="confirm"
          role="alertdialog"
          aria-label={confirming === "restore" ? "Revert to here?" : "Undo this change?"}
        >
          {question[confirming](typeLabel)}{" "}
          <button type="button" onClick={() => run(confirming)} disabled={busy}>
            {confirming === "restore" ? "Yes, revert" : "Yes, undo"}
          </button>{" "}
          <button type="button" className="secondary" onClick={cancel}>
            Cancel
          </button>
        </span>
      ) : null}
      {changedSince !== undefined ? (
        <span className="confirm" role="alertdialog" aria-label="Changed again since">
          Not undone: {changedSince.fields.map(humanize).join(", ")} {changedSince.fields.length === 1 ? "was" : "were"}{" "}
          changed again since. Undo anyway, overwriting{" "}
          {changedSince.fields.length === 1 ? "that change" : "those changes"}?{" "}
          <button type="button" className="danger" onClick={() => run("undo", true)} disabled={busy}>
            Undo anyway
          </button>{" "}
          <button type="button" className="secondary" onClick={cancel}>
            Cancel
          </button>
        </span>
      ) : revert.isError ? (
        <p className="error" role="alert">
          {errorMessage(revert.error)}
        </p>
      ) : null}
    </div>
  )
}
