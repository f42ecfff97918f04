import { useEffect, useState } from "react"
import type { Field, Fields } from "../../../src/api/Field"
import { own } from "../../../src/api/own"
import type { Json } from "../../../src/api/Json"
import { formatFilter } from "../../../src/api/RecordQuery"
import { errorMessage } from "../errors"
import { formatDateTime, formatWireDate } from "../format/dates"
import { businessObjectLabel, humanize, plural } from "../labels"
import { useDefinition, useRecordPages, useRecords } from "../queries"
import { Link, listPath, navigate, newRecordPath, recordPath, useSearch } from "../router"
import { LinkTitle } from "./LinkTitle"
import { TitlesProvider } from "../titles/TitlesContext"
import type { ListState } from "./listState"
import { ariaSort, filterColumns, formatListState, nextSort, parseListState, urlFilterFields } from "./listState"
import { recordTitle } from "./recordTitle"

/** Kinds a list can sort by (a link would sort by an id: it is not offered). */
const sortable = (field: Field | undefined) => field !== undefined && field.kind !== "link"

/**
 * A business object's records as a table of its declared columns: sortable
 * headers (`aria-sort`), a filter per choice and link column, a title search
 * and "Load more" (keyset pages), all kept in the URL. The first column links
 * to the record; "New <type>" opens an empty form, for a viewer who may
 * create them. Refetched whenever one of them changes.
 */
export const RecordList = ({ businessObject }: { readonly businessObject: string }) => {
  const definition = useDefinition(businessObject)
  const search = useSearch()
  const label = businessObjectLabel(businessObject)
  const fields = definition.data?.fields ?? {}
  const columns = definition.data?.columns ?? []
  const filterable = filterColumns(fields, columns)
  const state = parseListState(search, urlFilterFields(fields, columns))
  const hiddenFilters = Object.keys(state.filters).filter((name) => !filterable.includes(name))
  const setState = (next: ListState) =>
    navigate(`${listPath(businessObject)}${formatListState(next)}`, { replace: true })
  const pages = useRecordPages(
    businessObject,
    {
      ...(state.sort === undefined ? {} : { sort: state.sort }),
      ...(state.order === undefined ? {} : { order: state.order }),
      ...(state.q.trim() === "" ? {} : { q: state.q.trim() }),
      filter: Object.entries(state.filters).map(([field, value]) => formatFilter({ field, operator: "=", value }))
    },
    definition.isSuccess
  )
  const records = pages.data?.pages.flatMap((page) => page.records) ?? []
  const [first, ...rest] = columns
  const filtered = state.q.trim() !== "" || Object.keys(state.filters).length > 0

  const header = (column: string, text: string, canSort: boolean) => (
    <th scope="col" key={column} aria-sort={canSort ? ariaSort(state, column) : undefined}>
      {canSort ? (
        <button type="button" className="sort" onClick={() => setState(nextSort(state, column))}>
          {text}
          <span aria-hidden="true">{state.sort !== column ? "" : state.order === "desc" ? " ▼" : " ▲"}</span>
        </button>
      ) : (
        text
      )}
    </th>
  )

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
      <div className="filters list-filters">
        <SearchBox
          label={`Search ${plural(label.toLowerCase())}`}
          value={state.q}
          onSearch={(q) => setState({ ...state, q })}
        />
        {filterable.map((column) => (
          <ColumnFilter
            key={column}
            column={column}
            field={own(fields, column)}
            value={own(state.filters, column) ?? ""}
            onChange={(value) =>
              setState({
                ...state,
                filters: Object.fromEntries([
                  ...Object.entries(state.filters).filter(([name]) => name !== column),
                  ...(value === "" ? [] : [[column, value]])
                ])
              })
            }
          />
        ))}
        {hiddenFilters.map((name) => {
          const field = own(fields, name)
          const value = own(state.filters, name) ?? ""
          return (
            <span key={name} className="filter">
              {humanize(name)}: {field?.kind === "link" ? <LinkTitle target={field.target} id={value} /> : value}{" "}
              <button
                type="button"
                className="secondary"
                aria-label={`Remove the ${humanize(name).toLowerCase()} filter`}
                onClick={() =>
                  setState({
                    ...state,
                    filters: Object.fromEntries(Object.entries(state.filters).filter(([other]) => other !== name))
                  })
                }
              >
                ×
              </button>
            </span>
          )
        })}
      </div>
      {pages.isError || definition.isError ? (
        <p className="error" role="alert">
          {errorMessage(pages.error ?? definition.error)}
        </p>
      ) : null}
      {pages.isPending && !pages.isError ? <p className="muted">Loading…</p> : null}
      {pages.isSuccess && records.length === 0 ? (
        <p className="muted">
          {filtered ? `No ${plural(label.toLowerCase())} match.` : `No ${plural(label.toLowerCase())} yet.`}
        </p>
      ) : null}
      {records.length > 0 ? (
        <table className="records" aria-label={plural(label)}>
          <thead>
            <tr>
              {first === undefined ? (
                <th scope="col">{label}</th>
              ) : (
                header(first, humanize(first), sortable(own(fields, first)))
              )}
              {rest.map((column) => header(column, humanize(column), sortable(own(fields, column))))}
              {header("updatedAt", "Updated", true)}
            </tr>
          </thead>
          <tbody>
            {records.map((record) => (
              <tr key={record.id}>
                <td>
                  <Link to={recordPath(businessObject, record.id)}>{recordTitle(fields, record)}</Link>
                  {record.state === "operational" ? null : <span className="state"> {humanize(record.state)}</span>}
                </td>
                {rest.map((column) => (
                  <td key={column} className={`cell-${own(fields, column)?.kind ?? "none"}`}>
                    <TitlesProvider titles={record.titles}>
                      <Cell field={own(fields, column)} value={own(record.values, column)} />
                    </TitlesProvider>
                  </td>
                ))}
                <td>{formatDateTime(record.updatedAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {pages.hasNextPage ? (
        <button
          type="button"
          className="secondary load-more"
          disabled={pages.isFetchingNextPage}
          onClick={() => void pages.fetchNextPage()}
        >
          {pages.isFetchingNextPage ? "Loading…" : "Load more"}
        </button>
      ) : null}
    </section>
  )
}

/** One value of a column: a link as its target's title, yes/no, or the value as stored. */
const Cell = ({ field, value }: { readonly field: Field | undefined; readonly value: Json | undefined }) => {
  if (value === null || value === undefined || value === "") return <span className="none">—</span>
  if (field?.kind === "link" && typeof value === "string") return <LinkTitle target={field.target} id={value} />
  if (typeof value === "boolean") return <>{value ? "yes" : "no"}</>
  if (typeof value === "object") return <span className="muted">…</span>
  if (field?.kind === "date" && typeof value === "string") return <>{formatWireDate(value)}</>
  if (field?.kind === "datetime" && typeof value === "string") return <>{formatDateTime(value)}</>
  return <>{String(value)}</>
}

/** A search over titles, sent when submitted (Enter or the button) and cleared with the input. */
const SearchBox = ({
  label,
  value,
  onSearch
}: {
  readonly label: string
  readonly value: string
  readonly onSearch: (q: string) => void
}) => {
  const [draft, setDraft] = useState(value)
  useEffect(() => setDraft(value), [value])
  return (
    <search className="search">
      <form
        onSubmit={(event) => {
          event.preventDefault()
          onSearch(draft)
        }}
      >
        <input
          type="search"
          aria-label={label}
          placeholder={label}
          value={draft}
          onChange={(event) => {
            setDraft(event.target.value)
            if (event.target.value === "") onSearch("")
          }}
        />
        <button type="submit" className="secondary">
          Search
        </button>
      </form>
    </search>
  )
}

/** A filter of one choice or link column: any, or one option (a link: one of the target's records). */
const ColumnFilter = ({
  column,
  field,
  value,
  onChange
}: {
  readonly column: string
  readonly field: Field | undefined
  readonly value: string
  readonly onChange: (value: string) => void
}) => (
  <label className="filter">
    {humanize(column)}{" "}
    <select value={value} onChange={(event) => onChange(event.target.value)}>
      <option value="">any</option>
      {field?.kind === "choice"
        ? field.options.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))
        : null}
      {field?.kind === "link" ? <TargetOptions target={field.target} selected={value} /> : null}
    </select>
  </label>
)

/** The options of a link filter: the target's newest records by title (and the one selected, if not among them). */
const TargetOptions = ({ target, selected }: { readonly target: string; readonly selected: string }) => {
  const definition = useDefinition(target)
  const records = useRecords(target)
  const fields: Fields = definition.data?.fields ?? {}
  const listed = records.data ?? []
  return (
    <>
      {selected !== "" && !listed.some((record) => record.id === selected) ? (
        <option value={selected}>selected {businessObjectLabel(target).toLowerCase()}</option>
      ) : null}
      {listed.map((record) => (
        <option key={record.id} value={record.id}>
          {recordTitle(fields, record)}
        </option>
      ))}
    </>
  )
}
