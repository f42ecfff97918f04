/**
 * Path segments of a business object `<namespace>/<name>`. Records and
 * presence routes take it as two segments (`/records/crm/deal`), the timeline
 * as one encoded segment (`crm%2Fdeal`).
 */
export const typeSegments = (businessObject: string): string => {
  const slash = businessObject.indexOf("/")
  if (slash <= 0 || slash === businessObject.length - 1) {
    throw new TypeError(`a business object is named <namespace>/<name>, not ${JSON.stringify(businessObject)}`)
  }
  return `${encodeURIComponent(businessObject.slice(0, slash))}/${encodeURIComponent(businessObject.slice(slash + 1))}`
}

export const segment = (value: string): string => encodeURIComponent(value)
