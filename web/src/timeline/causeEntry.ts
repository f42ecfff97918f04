import type { Cause } from "../../../src/api/Cause"

/** What finding a cascade's cause needs of a row. */
export interface Traceable {
  readonly at: string | Date
  readonly correlationId?: string
  readonly businessObject?: string
  readonly businessObjectId?: string
  readonly operation: string
  readonly cause: Cause | null
}

const instant = (at: string | Date): number => (typeof at === "string" ? Date.parse(at) : at.getTime())

/**
 * The row of the event a cascade row names as its cause, among `candidates`
 * (any timeline rows, newest first): the row of that record with that
 * operation in the same unit of work (a listener's write), else the newest
 * one written no later than the cascade row (a workflow runs in a unit of
 * its own, after the event's). Undefined when the cause is not an event or
 * its row is not among the candidates. Pure.
 */
export const findCauseEntry = <E extends Traceable>(entry: Traceable, candidates: ReadonlyArray<E>): E | undefined => {
  const cause = entry.cause
  if (cause === null || cause.kind !== "event") return undefined
  const causing = candidates.filter(
    (candidate) =>
      candidate !== entry &&
      candidate.businessObject === cause.businessObject &&
      candidate.businessObjectId === cause.businessObjectId &&
      candidate.operation === cause.operation &&
      instant(candidate.at) <= instant(entry.at)
  )
  return causing.find((candidate) => candidate.correlationId === entry.correlationId) ?? causing[0]
}
