import type { FormEvent } from "react"
import { useEffect, useMemo, useState } from "react"
import type { Fields } from "../../../src/api/Field"
import { fieldIssues } from "../../../src/api/FieldIssues"
import type { Json } from "../../../src/api/Json"
import { own } from "../../../src/api/own"
import { VersionConflictError } from "../../../src/client"
import { ConflictView } from "../conflict/ConflictView"
import { errorMessage } from "../errors"
import { useEditingPresence, useRefetchBusinessObject, useSaveRecord } from "../queries"
import type { Edits } from "./edits"
import { pendingChanges, withoutSaved } from "./edits"
import { FieldEditor } from "./FieldEditor"
import { issuesByField } from "./issues"
import { ReadOnlyForm } from "./readOnly"
import { toWireObject } from "./values"

interface Props {
  readonly businessObject: string
  readonly fields: Fields
  readonly record: {
    readonly id: string
    readonly state: string
    readonly version: number
    readonly values: unknown
  }
  readonly label: string
  /** This form's editor id in presence. */
  readonly editorId: string
  /** Shown but not editable: the viewer may only read it, or it is archived. */
  readonly readOnly: boolean
}

/**
 * A record's fields by kind, and Save (PATCH with the changed fields only) /
 * Discard. What is shown is the record as last fetched with the unsaved
 * changes laid over it, so another tab's save shows at once in every field
 * this form has not changed. A save is checked with the service's own field
 * rules first (nothing is sent when they refuse it) and sent with `If-Match`:
 * the version the record had when this form's first unsaved change was made.
 * When the record moved on since, the conflict view says who changed what,
 * and the person keeps theirs or takes the record as it is. While an
 * operational record has unsaved changes the form heartbeats its presence.
 */
export const RecordForm = ({ businessObject, fields, record, label, editorId, readOnly }: Props) => {
  const [edits, setEdits] = useState<Edits>({})
  // The version the unsaved edits were made on; none while there are none.
  const [base, setBase] = useState<number | undefined>(undefined)
  const [issues, setIssues] = useState<Readonly<Record<string, string>>>({})
  const current = useMemo(() => toWireObject(record.values), [record.values])
  const pending = pendingChanges(current, edits)
  const dirty = Object.keys(pending).length > 0
  const shown = { ...current, ...pending }
  const save = useSaveRecord(businessObject, record.id)
  const refetch = useRefetchBusinessObject(businessObject)
  const conflict = save.error instanceof VersionConflictError ? save.error : undefined
  useEditingPresence(businessObject, record.id, editorId, dirty && record.state === "operational" && !readOnly)
  useEffect(() => {
    if (!dirty) setBase(undefined)
  }, [dirty])

  const change = (name: string) => (value: Json) => {
    setBase((old) => old ?? record.version)
    setEdits((old) => ({ ...old, [name]: value }))
  }
  const send = (version: number) => {
    const found = fieldIssues(fields, pending, record.state === "draft" ? "draft" : "patch")
    setIssues(issuesByField(found))
    if (found.length > 0) return
    const sent = pending
    save.mutate(sent, version, { onSuccess: () => setEdits((old) => withoutSaved(old, sent)) })
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    if (dirty) send(base ?? record.version)
  }
  const discard = () => {
    save.reset()
    setIssues({})
    setEdits({})
  }
  const takeTheirs = () => {
    discard()
    void refetch()
  }
  const status = save.isPending
    ? "Saving…"
    : conflict !== undefined
      ? "Not saved: changed meanwhile"
      : dirty
        ? "Unsaved changes"
        : save.isSuccess
          ? "Saved"
          : ""

  return (
    <ReadOnlyForm.Provider value={readOnly}>
      <form className="record-form" aria-label={readOnly ? label : `Edit ${label}`} onSubmit={submit} noValidate>
        {Object.entries(fields).map(([name, field]) => (
          <FieldEditor
            key={name}
            name={name}
            field={field}
            value={own(shown, name)}
            onChange={change(name)}
            error={own(issues, name)}
          />
        ))}
        {conflict !== undefined ? (
          <ConflictView
            conflict={conflict}
            fields={fields}
            current={record.values}
            mine={Object.keys(pending)}
            refused="Your changes were not saved"
            onKeepMine={send}
            onTakeTheirs={takeTheirs}
            busy={save.isPending}
          />
        ) : save.isError ? (
          <p className="error" role="alert">
            {errorMessage(save.error)}
          </p>
        ) : null}
        {readOnly ? null : (
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
        )}
      </form>
    </ReadOnlyForm.Provider>
  )
}
