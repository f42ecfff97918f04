import type { FormEvent } from "react"
import { useState } from "react"
import { fieldIssues } from "../../../src/api/FieldIssues"
import type { Json } from "../../../src/api/Json"
import { own } from "../../../src/api/own"
import { errorMessage } from "../errors"
import type { Edits } from "../form/edits"
import { FieldEditor } from "../form/FieldEditor"
import { issuesByField } from "../form/issues"
import { normalize } from "../form/values"
import { businessObjectLabel, plural } from "../labels"
import { useCreateRecord, useDefinition } from "../queries"
import { Link, listPath, navigate, recordPath } from "../router"

/**
 * A new record: its fields, empty, and Create. The values are checked with
 * the service's own field rules for a whole record (`fieldIssues`, "whole")
 * before anything is sent: a required field left empty is shown under the
 * field and nothing is saved.
 */
export const NewRecordPage = ({ businessObject }: { readonly businessObject: string }) => {
  const definition = useDefinition(businessObject)
  const create = useCreateRecord(businessObject)
  const [values, setValues] = useState<Edits>({})
  const [issues, setIssues] = useState<Readonly<Record<string, string>>>({})
  const typeLabel = businessObjectLabel(businessObject)
  if (definition.isError) {
    return (
      <p className="error" role="alert">
        {errorMessage(definition.error)}
      </p>
    )
  }
  if (definition.data === undefined) return <p className="muted">Loading…</p>
  const { fields, mayUpdate } = definition.data
  if (!mayUpdate) {
    return (
      <p className="error" role="alert">
        You may not create {plural(typeLabel.toLowerCase())}.
      </p>
    )
  }

  const change = (name: string) => (value: Json) => setValues((old) => ({ ...old, [name]: value }))
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const given = Object.fromEntries(
      Object.entries(values).flatMap(([name, value]) => {
        const kept = normalize(value)
        return kept === undefined ? [] : [[name, kept] as const]
      })
    )
    const found = fieldIssues(fields, given, "whole")
    setIssues(issuesByField(found))
    if (found.length > 0) return
    create.mutate(
      { values: given },
      { onSuccess: (record) => navigate(recordPath(businessObject, record.id), { replace: true }) }
    )
  }

  return (
    <section className="panel" aria-labelledby="new-heading">
      <div className="page-title">
        <h1 id="new-heading">New {typeLabel.toLowerCase()}</h1>
        <Link to={listPath(businessObject)}>All {plural(typeLabel.toLowerCase())}</Link>
      </div>
      <form className="record-form" aria-label={`New ${typeLabel.toLowerCase()}`} onSubmit={submit} noValidate>
        {Object.entries(fields).map(([name, field]) => (
          <FieldEditor
            key={name}
            name={name}
            field={field}
            value={own(values, name)}
            onChange={change(name)}
            error={own(issues, name)}
          />
        ))}
        {create.isError ? (
          <p className="error" role="alert">
            {errorMessage(create.error)}
          </p>
        ) : null}
        <div className="form-actions">
          <button type="submit" disabled={create.isPending}>
            Create
          </button>
          <span className="status" role="status">
            {create.isPending ? "Saving…" : Object.keys(issues).length > 0 ? "Not saved: see the fields marked" : ""}
          </span>
        </div>
      </form>
    </section>
  )
}
