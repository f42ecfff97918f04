import type { Fields } from "../../../src/api/Field"
import { own } from "../../../src/api/own"

/**
 * What a list shows, kept in the page's URL (`?sort=amount&order=desc&stage=won&q=kiosk`)
 * so that a reload, a shared link and Back show the same rows: the sort, the
 * search and one equality filter per choice or link column (by field name).
 */
export interface ListState {
  readonly sort: string | undefined
  readonly order: "asc" | "desc" | undefined
  readonly q: string
  readonly filters: Readonly<Record<string, string>>
}

/** Parameters of the list's URL that are not filters. */
const reserved = new Set(["sort", "order", "q"])

/** The columns a list offers a filter for: choice and link columns. */
export const filterColumns = (fields: Fields, columns: ReadonlyArray<string>): ReadonlyArray<string> =>
  columns.filter((column) => {
    const field = own(fields, column)
    return field?.kind === "choice" || field?.kind === "link"
  })

/** The fields a list's URL may filter on: its choice and link columns, and every link field (a record's backlinks). */
export const urlFilterFields = (fields: Fields, columns: ReadonlyArray<string>): ReadonlyArray<string> => [
  ...new Set([
    ...filterColumns(fields, columns),
    ...Object.entries(fields).flatMap(([name, field]) => (field.kind === "link" ? [name] : []))
  ])
]

/** The list state of a URL's search, keeping only filters of `filterable` fields. */
export const parseListState = (search: string, filterable: ReadonlyArray<string>): ListState => {
  const params = new URLSearchParams(search)
  const order = params.get("order")
  const filters = Object.fromEntries(
    [...params].filter(([name, value]) => !reserved.has(name) && filterable.includes(name) && value !== "")
  )
  return {
    sort: params.get("sort") ?? undefined,
    order: order === "asc" || order === "desc" ? order : undefined,
    q: params.get("q") ?? "",
    filters
  }
}

/** The URL search of a list state (`""` for the default list). */
export const formatListState = (state: ListState): string => {
  const params = new URLSearchParams()
  if (state.sort !== undefined) params.set("sort", state.sort)
  if (state.order !== undefined) params.set("order", state.order)
  if (state.q.trim() !== "") params.set("q", state.q)
  for (const [name, value] of Object.entries(state.filters)) if (value !== "") params.set(name, value)
  const text = params.toString()
  return text === "" ? "" : `?${text}`
}

/** The state after a click on a column header: ascending first, then descending, then the default order. */
export const nextSort = (state: ListState, column: string): ListState => {
  if (state.sort !== column) return { ...state, sort: column, order: "asc" }
  if (state.order !== "desc") return { ...state, sort: column, order: "desc" }
  return { ...state, sort: undefined, order: undefined }
}

/** `aria-sort` of a column header. */
export const ariaSort = (state: ListState, column: string): "ascending" | "descending" | "none" =>
  state.sort !== column ? "none" : state.order === "desc" ? "descending" : "ascending"
