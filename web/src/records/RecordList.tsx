import { errorMessage } from "../errors"
import { businessObjectLabel, plural } from "../labels"
import { useDefinition, useRecords } from "../queries"
import { Link, newRecordPath, recordPath } from "../router"
import { recordTitle } from "./recordTitle"

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" })

const formatDate = (iso: string) => {
  const date = new Date(iso)
  return Number.isNaN(date.getTime()) ? iso : dateFormat.format(date)
}

/**
 * The newest records of a business object, each a link to its page;
 * refetched whenever one changes. "New <type>" opens an empty form, for a
 * viewer who may create them.
 */
export const RecordList = ({ businessObject }: { readonly businessObject: string }) => {
  const definition = useDefinition(businessObject)
  const records = useRecords(businessObject)
  const label = businessObjectLabel(businessObject)
  const fields = definition.data?.fields ?? {}
  return (
    <section className="panel" aria-labelledby="list-heading">
      <header className="page-title">
        <h1 id="list-heading">{plural(label)}</h1>
        {definition.data?.mayUpdate === true ? (
          <Link className="button secondary" to={newRecordPath(businessObject)}>
            New {label.toLowerCase()}
          </Link>
        ) : null}
      </header>
      {records.isError ? (
        <p className="error" role="alert">
          {errorMessage(records.error)}
        </p>
      ) : null}
      {records.isPending ? <p className="muted">Loading…</p> : null}
      {records.data !== undefined && records.data.length === 0 ? (
        <p className="muted">No {plural(label.toLowerCase())} yet.</p>
      ) : null}
      {records.data !== undefined && records.data.length > 0 ? (
        <table className="records">
          <thead>
            <tr>
              <th scope="col">{label}</th>
              <th scope="col">State</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {records.data.map((record) => (
              <tr key={record.id}>
                <td>
                  <Link to={recordPath(businessObject, record.id)}>{recordTitle(fields, record)}</Link>
                </td>
                <td>
                  <span className="state">{record.state}</span>
                </td>
                <td>{formatDate(record.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  )
}
