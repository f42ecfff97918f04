import { useState } from "react"
import { errorMessage } from "../errors"
import { AsOfView } from "../history/AsOfView"
import { EntryActions } from "../history/EntryActions"
import { RecordForm } from "../form/RecordForm"
import { plural } from "../labels"
import { browserEditorId, tabEditorId } from "../presence/editorId"
import { EditorsNotice } from "../presence/EditorsNotice"
import { useDefinition, useRecord } from "../queries"
import { Link, listPath } from "../router"
import { Timeline } from "../timeline/Timeline"
import { Backlinks } from "./Backlinks"
import { RecordActions } from "./RecordActions"
import { recordTitle } from "./recordTitle"
import { StateBadge } from "../titles/StateBadge"
import { TitlesProvider } from "../titles/TitlesContext"
import { typeLabelOf } from "../titles/typeLabel"

/**
 * One record: its form with who else is editing it and what can be done to
 * it, beside its timeline. A viewer without the update grant sees it read
 * only, without the controls the service would refuse; so does everyone for
 * an archived record (restore it first).
 */
export const RecordPage = ({ businessObject, id }: { readonly businessObject: string; readonly id: string }) => {
  const definition = useDefinition(businessObject)
  const record = useRecord(businessObject, id)
  const [browserId] = useState(browserEditorId)
  const [editorId] = useState(() => tabEditorId(browserId))
  /** The timeline entry the record is shown as of; none: as it is. */
  const [asOf, setAsOf] = useState<string | undefined>(undefined)
  const typeLabel = typeLabelOf(businessObject, definition.data)
  if (record.isError || definition.isError) {
    return (
      <p className="error" role="alert">
        {errorMessage(record.error ?? definition.error)}
      </p>
    )
  }
  if (record.data === undefined || definition.data === undefined) return <p className="muted">Loading…</p>
  const { fields, actions, mayUpdate } = definition.data
  const title = recordTitle(fields, record.data)
  const current = record.data
  const mayRevert = mayUpdate && current.state === "operational"
  return (
    <div>
      <div className="page-title">
        <h1>
          {typeLabel}: {title}
        </h1>
        <StateBadge state={record.data.state} />
        {mayUpdate ? null : <span className="state read-only">read only</span>}
        <Link to={listPath(businessObject)}>All {plural(typeLabel.toLowerCase())}</Link>
      </div>
      <TitlesProvider titles={record.data.titles}>
        <div className="record-page">
          <section className="panel" aria-label="Record">
            {asOf !== undefined ? (
              <AsOfView
                businessObject={businessObject}
                id={id}
                entry={asOf}
                fields={fields}
                typeLabel={typeLabel.toLowerCase()}
                onBack={() => setAsOf(undefined)}
              />
            ) : null}
            {/* Hidden, not unmounted, while the past is shown: unsaved edits stay. */}
            <div hidden={asOf !== undefined}>
              <EditorsNotice businessObject={businessObject} id={id} browserId={browserId} />
              {mayUpdate ? (
                <RecordActions
                  businessObject={businessObject}
                  record={record.data}
                  fields={fields}
                  actions={actions}
                  actionLabels={definition.data.actionLabels}
                  typeLabel={typeLabel.toLowerCase()}
                />
              ) : null}
              <RecordForm
                key={record.data.id}
                businessObject={businessObject}
                fields={fields}
                record={record.data}
                editorId={editorId}
                label={`${typeLabel} ${title}`}
                readOnly={!mayUpdate || record.data.state === "archived"}
              />
            </div>
            <Backlinks businessObject={businessObject} id={id} />
          </section>
          <Timeline
            businessObject={businessObject}
            id={id}
            fields={fields}
            current={record.data.values}
            entryActions={(entry) => (
              <EntryActions
                businessObject={businessObject}
                entry={entry}
                record={current}
                mayRevert={mayRevert}
                onViewAsOf={setAsOf}
                typeLabel={typeLabel.toLowerCase()}
              />
            )}
          />
        </div>
      </TitlesProvider>
    </div>
  )
}
