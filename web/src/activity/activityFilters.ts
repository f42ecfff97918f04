import type { FeedFilters } from "../../../src/client/react"
import { activityPath } from "../router"

/** What Activity can be narrowed by; each is a feed filter of the same name (docs/feed.md, "Filters"). */
export const activityFilterNames = ["businessObject", "actor", "record", "from", "to"] as const
export type ActivityFilterName = (typeof activityFilterNames)[number]
export type ActivityFilters = Partial<Record<ActivityFilterName, string>>

/** The filters a URL's query string names (others ignored, empty ones left out). */
export const parseActivityFilters = (search: string): ActivityFilters => {
  const query = new URLSearchParams(search)
  const filters: ActivityFilters = {}
  for (const name of activityFilterNames) {
    const value = query.get(name)
    if (value !== null && value !== "") filters[name] = value
  }
  return filters
}

/** The Activity page narrowed by `filters`: a link that opens it so. */
export const activityFilterPath = (filters: ActivityFilters): string => {
  const query = new URLSearchParams()
  for (const name of activityFilterNames) {
    const value = filters[name]
    if (value !== undefined && value !== "") query.set(name, value)
  }
  const text = query.toString()
  return text === "" ? activityPath : `${activityPath}?${text}`
}

/** The feed's filters of the page's. */
export const feedFiltersOf = (filters: ActivityFilters): FeedFilters => ({ ...filters })
