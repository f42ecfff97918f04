import { Effect, Schema } from "effect"
import { queryLimit } from "./QueryLimit"
import { StoredRecord } from "./StoredRecord"

/** Records a list answers when the caller names no `limit`. */
export const recordsDefaultLimit = 100
/** The longest search text (`q`) a list takes: a longer one is a 400. */
export const searchMaxLength = 200

/** Sort keys every business object has besides its columns. */
export const recordTimeKeys = ["updatedAt", "createdAt"] as const

export const SortOrder = Schema.Literals(["asc", "desc"])
export type SortOrder = typeof SortOrder.Type

/**
 * The query of `GET /api/records/:namespace/:name` (docs/web.md, "Lists"):
 * `sort` a declared column, `updatedAt` or `createdAt` (default createdAt,
 * descending); `filter` repeated, each `field=value` (equality; empty: no
 * value) or `field>=value`, `field<=value`, `field>value`, `field<value`
 * (numbers, decimals, dates, datetimes); `q` words the title contains (each
 * a word prefix); `cursor` the previous page's `nextCursor`.
 */
export const RecordListQuery = {
  limit: queryLimit(1, 500, recordsDefaultLimit),
  sort: Schema.optionalKey(Schema.String),
  order: Schema.optionalKey(SortOrder),
  filter: Schema.optionalKey(Schema.Array(Schema.String)),
  q: Schema.optionalKey(Schema.String),
  cursor: Schema.optionalKey(Schema.String)
}

export const FilterOperator = Schema.Literals(["=", ">=", "<=", ">", "<"])
export type FilterOperator = typeof FilterOperator.Type

/** One `filter` parameter, parsed. */
export interface RecordFilter {
  readonly field: string
  readonly operator: FilterOperator
  readonly value: string
}

const filterPattern = /^([A-Za-z_$][\w$-]*)(>=|<=|=|>|<)(.*)$/su

/** `stage=won` as a filter; undefined for text that is not `<field><operator><value>`. */
export const parseFilter = (text: string): RecordFilter | undefined => {
  const match = filterPattern.exec(text)
  if (match === null) return undefined
  const [, field, operator, value] = match
  if (field === undefined || value === undefined) return undefined
  return Schema.is(FilterOperator)(operator) ? { field, operator, value } : undefined
}

/** The `filter` parameter of a filter: `parseFilter(formatFilter(f))` is `f`. */
export const formatFilter = (filter: RecordFilter): string => `${filter.field}${filter.operator}${filter.value}`

/**
 * A page of a list: `nextCursor` goes on after its last record, null when
 * there is nothing after it.
 */
export class RecordList extends Schema.Class<RecordList>("RecordList")({
  records: Schema.Array(StoredRecord),
  /** Null from a service that predates cursors: it answered one page. */
  nextCursor: Schema.NullOr(Schema.String).pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed(null)))
}) {}

/** The records of one business object whose link field names a record (a backlink group). */
export class LinkingRecords extends Schema.Class<LinkingRecords>("LinkingRecords")({
  businessObject: Schema.String,
  field: Schema.String,
  /** The newest first, at most the request's `limit`. */
  records: Schema.Array(StoredRecord),
  /** How many link to it in all: more than `records` holds when the limit cut them. */
  total: Schema.Int
}) {}

/** What links to a record, per business object and link field the caller may read. */
export class RecordBacklinks extends Schema.Class<RecordBacklinks>("RecordBacklinks")({
  groups: Schema.Array(LinkingRecords)
}) {}

export const backlinksDefaultLimit = 20
