import type { ReadFilter } from "../broadcast/ReadFilter"
import { allows, type Grant } from "./Grants"

/** Business objects a filter remembers its answer for; past that it just asks `allows` again. */
const rememberedObjects = 1_024
/** Distinct grant sets shared at once; past that the table starts afresh (sharing is only an optimization). */
const sharedGrantSets = 1_024

const signature = (grants: ReadonlyArray<Grant>) =>
  grants
    .map((grant) => `${grant.permission} ${grant.businessObject}`)
    .sort()
    .join("\n")

const makeFilter = (grants: ReadonlyArray<Grant>): ReadFilter => {
  const answers = new Map<string, boolean>()
  return (businessObject) => {
    const known = answers.get(businessObject)
    if (known !== undefined) return known
    const answer = allows(grants, businessObject, "read")
    if (answers.size < rememberedObjects) answers.set(businessObject, answer)
    return answer
  }
}

/**
 * Read filters by grant set: streams whose grants are equal get the same
 * filter object, which the hub uses to check each hint once per grant set
 * instead of once per stream. A filter is fixed at creation, as the spec
 * wants (permissions are read when the stream opens).
 */
export const makeReadFilters = () => {
  const filters = new Map<string, ReadFilter>()
  return (grants: ReadonlyArray<Grant>): ReadFilter => {
    const key = signature(grants)
    const shared = filters.get(key)
    if (shared !== undefined) return shared
    if (filters.size >= sharedGrantSets) filters.clear()
    const filter = makeFilter(grants)
    filters.set(key, filter)
    return filter
  }
}
