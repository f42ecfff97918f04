/**
 * The query key convention of the binding (spec, "Tab behaviour": queries are
 * keyed `[businessObject, name]` and `[presence, name]`):
 *
 * | data | key |
 * |---|---|
 * | records of a business object | `["crm/deal", "list", { limit }]` |
 * | one record | `["crm/deal", "record", id]` |
 * | a record's timeline (newest page) | `["crm/deal", "timeline", id, { limit }]` |
 * | a record's whole timeline, page by page | `["crm/deal", "timelinePages", id, { limit }]` |
 * | a record as it was (`asOf`: an entry id or an instant) | `["crm/deal", "asOf", id, asOf]` |
 * | live editors of a business object | `["presence", "crm/deal"]` |
 * | business object definitions | `["businessObjects"]` |
 * | the workspace feed, page by page | `["feed", { filters }]` |
 * | one unit of work and its cascade | `["correlation", correlationId]` |
 * | a list, page by page | `["crm/deal", "listPages", { sort, order, filter, q }]` |
 * | what links to a record | `["backlinks", "crm/company", id]` |
 *
 * Everything read about one business object starts with its full name
 * (`<namespace>/<name>`), so the prefix `["crm/deal"]` invalidates all of it
 * at once: a save does that, and so does a `changed` hint. A business object
 * name always holds a slash, so it never collides with `"presence"` or
 * `"businessObjects"`. Your own queries about a business object follow the
 * same rule (`["crm/deal", "myQuery", ...]`) to be refreshed with it.
 */
export const recordQueryKeys = {
  /** The prefix of every query about `businessObject`. */
  all: (businessObject: string) => [businessObject] as const,
  list: (businessObject: string, options: { readonly limit?: number } = {}) =>
    [businessObject, "list", options] as const,
  record: (businessObject: string, id: string) => [businessObject, "record", id] as const,
  timeline: (businessObject: string, id: string, options: { readonly limit?: number } = {}) =>
    [businessObject, "timeline", id, options] as const,
  timelinePages: (businessObject: string, id: string, options: { readonly limit?: number } = {}) =>
    [businessObject, "timelinePages", id, options] as const,
  asOf: (businessObject: string, id: string, asOf: string) => [businessObject, "asOf", id, asOf] as const,
  /** A list page by page, as `options` sort, filter and search it. */
  listPages: (businessObject: string, options: object) => [businessObject, "listPages", options] as const
}

/**
 * What links to a record: about several business objects (a company's deals
 * and activities), so a change to any of them refreshes it.
 */
export const backlinksQueryKeys = {
  all: ["backlinks"] as const,
  of: (businessObject: string, id: string) => ["backlinks", businessObject, id] as const
}

export const presenceQueryKeys = {
  /** The prefix of every presence query. */
  all: ["presence"] as const,
  editors: (businessObject: string) => ["presence", businessObject] as const
}

export const definitionsQueryKey = ["businessObjects"] as const

/** The workspace feed and correlation views: about every business object, so a `changed` hint refreshes them all. */
export const feedQueryKeys = {
  all: ["feed"] as const,
  pages: (filters: object) => ["feed", filters] as const,
  correlation: (correlationId: string) => ["correlation", correlationId] as const
}
