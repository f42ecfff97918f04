import type { Cause } from "../api/Cause"

export interface CorrelatedRow<A> {
  readonly correlationId: string
  readonly parentCorrelationId: string | null
  readonly cause: Cause | null
  readonly entry: A
}

export interface CauseGroup<A> {
  readonly correlationId: string
  readonly parentCorrelationId: string | null
  readonly cause: Cause | null
  readonly entries: ReadonlyArray<A>
}

/** JSON with object keys sorted: cause values compare by content, and key order in stored JSON is not fixed. */
const canonical = (value: unknown): string => {
  if (value === null || typeof value !== "object") return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`
  const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return `{${entries.map(([name, member]) => `${JSON.stringify(name)}:${canonical(member)}`).join(",")}}`
}

/**
 * Rows of a correlation (in commit order) grouped by unit and cause: one
 * group per distinct (unit, cause), placed where its first row is, its rows
 * in their order.
 */
export const groupByCause = <A>(rows: ReadonlyArray<CorrelatedRow<A>>): ReadonlyArray<CauseGroup<A>> => {
  const groups = new Map<string, { readonly group: CauseGroup<A>; readonly entries: Array<A> }>()
  for (const row of rows) {
    const key = `${row.correlationId}\n${canonical(row.cause)}`
    const known = groups.get(key)
    if (known !== undefined) {
      known.entries.push(row.entry)
      continue
    }
    const entries = [row.entry]
    groups.set(key, {
      group: {
        correlationId: row.correlationId,
        parentCorrelationId: row.parentCorrelationId,
        cause: row.cause,
        entries
      },
      entries
    })
  }
  return [...groups.values()].map(({ group }) => group)
}
