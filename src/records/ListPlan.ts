import type { Field, Fields } from "../api/Field"
import { own } from "../api/own"
import { parseFilter, recordTimeKeys, searchMaxLength } from "../api/RecordQuery"
import type { RecordFilter, SortOrder } from "../api/RecordQuery"
import { decimalPattern, datePattern, datetimePattern } from "../api/ValueSchema"
import type { ListCursor } from "./ListCursor"
import { sqlLiteral, titleVector } from "../plugins/titleSearch"

/** What a list asks for, as the endpoint decoded it. */
export interface ListRequest {
  readonly sort?: string | undefined
  readonly order?: SortOrder | undefined
  readonly filter?: ReadonlyArray<string> | undefined
  readonly q?: string | undefined
  readonly cursor?: ListCursor | undefined
  readonly limit: number
}

/** What a business object offers a list: its fields, its columns and its title rule. */
export interface ListSubject {
  readonly businessObject: string
  readonly fields: Fields
  readonly columns: ReadonlyArray<string>
  readonly title: string
}

/**
 * A list as SQL over `<workspace>.records`: `where` joined with AND (their
 * placeholders number from `$2`; `$1` is the business object), `orderBy`,
 * and `key`, the sort key as text for the next cursor.
 */
export interface ListPlan {
  readonly where: ReadonlyArray<string>
  readonly params: ReadonlyArray<unknown>
  readonly orderBy: string
  readonly key: string
  readonly sort: string
  readonly order: SortOrder
  readonly limit: number
}

/** A plan, or what is wrong with the request (each problem a sentence naming the parameter). */
export type PlanResult =
  | { readonly _tag: "Plan"; readonly plan: ListPlan }
  | { readonly _tag: "Refused"; readonly problems: ReadonlyArray<string> }

const literal = sqlLiteral
const valueText = (field: string) => `(values->>${literal(field)})`

type Cast = "text" | "numeric" | "boolean" | "timestamptz"

/** How a field's values compare: the cast of their text, and what a key or bound of it must look like. */
const castOf = (field: Field): Cast | undefined => {
  switch (field.kind) {
    case "string":
    case "choice":
    case "date":
      return "text"
    case "number":
    case "decimal":
      return "numeric"
    case "boolean":
      return "boolean"
    case "datetime":
      return "timestamptz"
    default:
      return undefined
  }
}

const isoMicros = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/u
const isRealInstant = (at: string) => !Number.isNaN(new Date(at).getTime())

/** Whether `text` may be cast to `cast` without PostgreSQL refusing it (a tampered cursor, a bad filter). */
const castable = (cast: Cast, text: string, kind: Field["kind"] | "time") => {
  switch (cast) {
    case "numeric":
      return decimalPattern.test(text)
    case "boolean":
      return text === "true" || text === "false"
    case "timestamptz":
      return (kind === "time" ? isoMicros : datetimePattern).test(text) && isRealInstant(text)
    case "text":
      return kind !== "date" || datePattern.test(text)
  }
}

/** The words of a search as a prefix query (`acme:* & corp:*`); none: the search asks for nothing. */
export const searchQuery = (q: string): string | undefined => {
  const words = q.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []
  return words.length === 0 ? undefined : words.map((word) => `${word}:*`).join(" & ")
}

const timeColumns: Readonly<Record<(typeof recordTimeKeys)[number], string>> = {
  updatedAt: "updated_at",
  createdAt: "created_at"
}
const isTimeKey = (name: string): name is (typeof recordTimeKeys)[number] => recordTimeKeys.some((key) => key === name)

const kindName = (kind: Field["kind"]) => (kind === "datetime" ? "date-time" : kind)

/** The sort key: its SQL expression, its text for a cursor, and the cast a cursor's key is compared with. */
interface SortKey {
  readonly expression: string
  readonly text: string
  readonly cast: Cast
  readonly kind: Field["kind"] | "time"
  readonly nullable: boolean
}

const sortKeyOf = (subject: ListSubject, sort: string): SortKey | string => {
  if (isTimeKey(sort)) {
    const column = timeColumns[sort]
    return {
      expression: column,
      text: `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')`,
      cast: "timestamptz",
      kind: "time",
      nullable: false
    }
  }
  const field = subject.columns.includes(sort) ? own(subject.fields, sort) : undefined
  if (field === undefined) {
    return `sort: ${sort} is not a column of ${subject.businessObject} (sort by ${[...subject.columns, ...recordTimeKeys].join(", ")})`
  }
  const cast = castOf(field)
  if (cast === undefined) return `sort: ${sort} is a ${field.kind} column; it cannot be sorted`
  return {
    expression: cast === "text" ? valueText(sort) : `${valueText(sort)}::${cast}`,
    text: valueText(sort),
    cast,
    kind: field.kind,
    nullable: true
  }
}

/** One filter as a condition, with its parameter; or the problem with it. */
const filterCondition = (
  subject: ListSubject,
  filter: RecordFilter,
  placeholder: string
): { readonly condition: string; readonly param: unknown } | string => {
  const { field: name, operator, value } = filter
  const field = own(subject.fields, name)
  if (field === undefined) return `filter: ${name} is not a field of ${subject.businessObject}`
  if (field.kind === "struct" || field.kind === "collection") {
    return `filter: ${name} is a ${field.kind}; filter by a field that holds one value`
  }
  const cast = castOf(field)
  if (operator === "=" && value === "")
    return { condition: `coalesce(${valueText(name)}, '') = ${placeholder}`, param: "" }
  const ranged =
    field.kind === "number" || field.kind === "decimal" || field.kind === "date" || field.kind === "datetime"
  if (operator !== "=" && !ranged) {
    return `filter: ${name}${operator}: ranges apply to numbers, decimals, dates and date-times, not to a ${field.kind}`
  }
  if (field.kind === "choice" && !field.options.includes(value)) {
    return `filter: ${name} has no option ${value} (options: ${field.options.join(", ")})`
  }
  if (field.kind === "string" || field.kind === "choice" || field.kind === "link" || field.kind === "boolean") {
    if (field.kind === "boolean" && !castable("boolean", value, "boolean")) return `filter: ${name} is true or false`
    const json = Object.fromEntries([[name, field.kind === "boolean" ? value === "true" : value]])
    return { condition: `values @> ${placeholder}::jsonb`, param: JSON.stringify(json) }
  }
  if (cast === undefined || !castable(cast, value, field.kind)) {
    return `filter: ${name}${operator}${value}: not a ${kindName(field.kind)}`
  }
  const left = cast === "text" ? valueText(name) : `${valueText(name)}::${cast}`
  return { condition: `${left} ${operator} ${placeholder}::${cast}`, param: value }
}

/**
 * Plans a list request against a business object: its sort (a column or a
 * record time), filters, search and cursor, as SQL conditions with their
 * parameters, or the problems of the request (each naming what it refuses).
 */
export const planList = (subject: ListSubject, request: ListRequest): PlanResult => {
  const problems: Array<string> = []
  const where: Array<string> = []
  const params: Array<unknown> = []
  const placeholder = (param: unknown) => {
    params.push(param)
    return `$${params.length + 1}`
  }

  const sort = request.sort ?? "createdAt"
  const order: SortOrder = request.order ?? (request.sort === undefined ? "desc" : "asc")
  const key = sortKeyOf(subject, sort)
  if (typeof key === "string") problems.push(key)

  for (const text of request.filter ?? []) {
    const filter = parseFilter(text)
    if (filter === undefined) {
      problems.push(`filter: ${text} is not <field>=<value> (or >=, <=, >, <)`)
      continue
    }
    const condition = filterCondition(subject, filter, `$${params.length + 2}`)
    if (typeof condition === "string") problems.push(condition)
    else {
      params.push(condition.param)
      where.push(condition.condition)
    }
  }

  const q = request.q?.trim() ?? ""
  if (q.length > searchMaxLength) problems.push(`q: at most ${searchMaxLength} characters`)
  else {
    const query = searchQuery(q)
    if (query !== undefined)
      where.push(`${titleVector(subject.title)} @@ to_tsquery('simple'::regconfig, ${placeholder(query)})`)
  }

  const cursor = request.cursor
  if (cursor !== undefined && typeof key !== "string") {
    if (cursor.sort !== sort || cursor.order !== order) {
      problems.push(`cursor: made for sort=${cursor.sort}&order=${cursor.order}, not sort=${sort}&order=${order}`)
    } else if (cursor.key === null ? !key.nullable : !castable(key.cast, cursor.key, key.kind)) {
      problems.push("cursor: not a cursor this list made")
    } else {
      const after = order === "asc" ? ">" : "<"
      const id = placeholder(cursor.id)
      if (cursor.key === null) where.push(`(${key.expression} IS NULL AND id ${after} ${id}::uuid)`)
      else {
        const at = `${placeholder(cursor.key)}::${key.cast}`
        where.push(
          `(${key.expression} ${after} ${at} OR (${key.expression} = ${at} AND id ${after} ${id}::uuid)${key.nullable ? ` OR ${key.expression} IS NULL` : ""})`
        )
      }
    }
  }

  if (problems.length > 0 || typeof key === "string") return { _tag: "Refused", problems }
  const direction = order === "asc" ? "ASC" : "DESC"
  return {
    _tag: "Plan",
    plan: {
      where,
      params,
      orderBy: `${key.expression} ${direction} NULLS LAST, id ${direction}`,
      key: key.text,
      sort,
      order,
      limit: request.limit
    }
  }
}
