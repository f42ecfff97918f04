import { useState } from "react"
import { errorMessage } from "../errors"
import { newEditorId } from "../presence/editorId"
import { RecordForm } from "../form/RecordForm"
import { businessObjectLabel, plural } from "../labels"
import { EditorsNotice } from "../presence/EditorsNotice"
import { useDefinition, useRecord } from "../queries"
import { Link, listPath } from "../router"
import { Timeline } from "../timeline/Timeline"
import { recordTitle } from "./recordTitle"

/** One record: its form with who else is editing it, beside its timeline. */
export const RecordPage = ({ businessObject, id }: { readonly businessObject: string; readonly id: string }) => {
  const definition = useDefinition(businessObject)
  const record = useRecord(businessObject, id)
  const [editorId] = useState(newEditorId)
  const typeLabel = businessObjectLabel(businessObject)
  if (record.isError || definition.isError) {
    return (
      <p className="error" role="alert">
        {errorMessage(record.error ?? definition.error)}
      </p>
    )
  }
  if (record.data === undefined || definition.data === undefined) return <p className="muted">Loading…</p>
  const title = recordTitle(definition.data.fields, record.data)
  return (
    <div>
      <div className="page-title">
        <h1>
          {typeLabel}: {title}
        </h1>
        <span className="state">{record.data.state}</span>
        <Link to={listPath(businessObject)}>All {plural(typeLabel.toLowerCase())}</Link>
      </div>
      <div className="record-page">
        <section className="panel" aria-label="Record">
          <EditorsNotice businessObject={businessObject} id={id} ownEditorId={editorId} />
          <RecordForm
            key={record.data.id}
            businessObject={businessObject}
            fields={definition.data.fields}
            record={record.data}
            editorId={editorId}
            label={`${typeLabel} ${title}`}
          />
        </section>
        <Timeline
          businessObject={businessObject}
          id={id}
          fields={definition.data.fields}
          current={record.data.values}
        />
      </div>
    </div>
  )
}
