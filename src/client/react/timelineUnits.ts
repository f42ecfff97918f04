/** What grouping needs of a timeline row. */
export interface UnitKeyed {
  readonly correlationId: string
  readonly at: string
}

/** Rows written by one unit of work: the same correlation id and the same `at` (its transaction's timestamp). */
export interface TimelineUnit<E extends UnitKeyed> {
  readonly correlationId: string
  readonly at: string
  /** In the order given (newest first on a timeline); never empty. */
  readonly entries: readonly [E, ...Array<E>]
}

/**
 * The rows of a timeline (newest first) as units of work: neighbours with
 * the same correlation id and `at` form one unit. A unit's rows are
 * neighbours on a timeline (they share their `at`, by which it is
 * ordered), so grouping neighbours loses none; the order is kept, and so is
 * every row. Pure.
 */
export const groupByUnit = <E extends UnitKeyed>(entries: ReadonlyArray<E>): ReadonlyArray<TimelineUnit<E>> => {
  const units: Array<{ correlationId: string; at: string; entries: [E, ...Array<E>] }> = []
  for (const entry of entries) {
    const last = units[units.length - 1]
    if (last !== undefined && last.correlationId === entry.correlationId && last.at === entry.at) {
      last.entries.push(entry)
    } else {
      units.push({ correlationId: entry.correlationId, at: entry.at, entries: [entry] })
    }
  }
  return units
}
