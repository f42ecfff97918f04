import type { FormEvent } from "react"
import { useMemo, useState } from "react"
import type { Fields } from "../../../src/api/Field"
import { errorMessage } from "../errors"
import { useEditingPresence, useSaveRecord } from "../queries"
import type { Edits } from "./edits"
import { pendingChanges, withoutSaved } from "./edits"
import { FieldEditor } from "./FieldEditor"
import type { Json } from "../../../src/api/Json"
import { toWireObject } from "./values"
import { own } from "../../../src/api/own"

interface Props {
  readonly businessObject: string
  readonly fields: Fields
  readonly record: { readonly id: string; readonly state: string; readonly values: unknown }
  readonly label: string
  /** This form's editor id in presence. */
  readonly editorId: string
}

/**
 * A record's fields by kind, and Save (PATCH with the changed fields only) /
 * Discard. What is shown is the record as last fetched with the unsaved
 * changes laid over it, so another tab's save shows at once in every field
 * this form has not changed. While an operational record has unsaved changes
 * the form heartbeats its presence; saving, discarding or leaving the page
 * ends it.
 */
export const RecordForm = ({ businessObject, fields, record, label, editorId }: Props) => {
  const [edits, setEdits] = useState<Edits>({})
  const current = useMemo(() => toWireObject(record.values), [record.values])
  const pending = pendingChanges(current, edits)
  const dirty = Object.keys(pending).length > 0
  const shown = { ...current, ...pending }
  const save = useSaveRecord(businessObject, record.id)
  useEditingPresence(businessObject, record.id, editorId, dirty && record.state === "operational")

  const change = (name: string) => (value: Json) => setEdits((old) => ({ ...old, [name]: value }))
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (!dirty) return
    save.mutate(pending, { onSuccess: () => setEdits((old) => withoutSaved(old, pending)) })
  }
  const discard = () => {
    save.reset()
    setEdits({})
  }
  const status = save.isPending ? "Saving…" : dirty ? "Unsaved changes" : save.isSuccess ? "Saved" : ""

  return (
    <form className="record-form" aria-label={`Edit ${label}`} onSubmit={submit}>
      {Object.entries(fields).map(([name, field]) => (
        <FieldEditor key={name} name={name} field={field} value={own(shown, name)} onChange={change(name)} />
      ))}
      {save.isError ? (
        <p className="error" role="alert">
          {errorMessage(save.error)}
        </p>
      ) : null}
      <div className="form-actions">
        <button type="submit" disabled={!dirty || save.isPending}>
          Save
        </button>
        <button type="button" className="secondary" disabled={!dirty || save.isPending} onClick={discard}>
          Discard changes
        </button>
        <span className="status" role="status">
          {status}
        </span>
      </div>
    </form>
  )
}
