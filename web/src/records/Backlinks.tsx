import type { LinkingRecords } from "../../../src/api/RecordQuery"
import { errorMessage } from "../errors"
import { businessObjectLabel, humanize, plural } from "../labels"
import { useBacklinks, useDefinition } from "../queries"
import { Link, listPath, recordPath } from "../router"
import { formatListState } from "./listState"
import { recordTitle } from "./recordTitle"

/**
 * The records that link to this one, per business object and link field the
 * viewer may read (a company's deals and activities, a deal's activities):
 * the newest of each, each linking to its record by title, and a link to the
 * whole list filtered on this record when there are more.
 */
export const Backlinks = ({ businessObject, id }: { readonly businessObject: string; readonly id: string }) => {
  const backlinks = useBacklinks(businessObject, id)
  if (backlinks.isError) {
    return (
      <p className="error" role="alert">
        {errorMessage(backlinks.error)}
      </p>
    )
  }
  const groups = backlinks.data?.groups ?? []
  if (groups.length === 0) return null
  /** A business object linking through two fields names the field in its heading. */
  const twice = (group: LinkingRecords) =>
    groups.filter((other) => other.businessObject === group.businessObject).length > 1
  return (
    <section className="panel backlinks" aria-label="Linked records">
      {groups.map((group) => (
        <LinkingGroup
          key={`${group.businessObject} ${group.field}`}
          group={group}
          id={id}
          namedByField={twice(group)}
        />
      ))}
    </section>
  )
}

const LinkingGroup = ({
  group,
  id,
  namedByField
}: {
  readonly group: LinkingRecords
  readonly id: string
  readonly namedByField: boolean
}) => {
  const definition = useDefinition(group.businessObject)
  const fields = definition.data?.fields ?? {}
  const heading = `${plural(businessObjectLabel(group.businessObject))}${namedByField ? ` (${humanize(group.field).toLowerCase()})` : ""}`
  const more = group.total - group.records.length
  const filteredList = `${listPath(group.businessObject)}${formatListState({ sort: undefined, order: undefined, q: "", filters: { [group.field]: id } })}`
  return (
    <section aria-label={heading}>
      <h2>
        {heading} <span className="muted">({group.total})</span>
      </h2>
      {group.records.length === 0 ? (
        <p className="muted">None yet.</p>
      ) : (
        <ul className="linking">
          {group.records.map((record) => (
            <li key={record.id}>
              <Link to={recordPath(group.businessObject, record.id)}>{recordTitle(fields, record)}</Link>
            </li>
          ))}
        </ul>
      )}
      {more > 0 ? <Link to={filteredList}>All {group.total}</Link> : null}
    </section>
  )
}
