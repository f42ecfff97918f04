/**
 * The `namespace` and `name` parameters of a business object
 * `<namespace>/<name>` (records and presence routes take it as two segments;
 * the timeline takes it whole, as one encoded segment). Throws a TypeError
 * for a name without a slash.
 */
export const typeParams = (businessObject: string): { readonly namespace: string; readonly name: string } => {
  const slash = businessObject.indexOf("/")
  if (slash <= 0 || slash === businessObject.length - 1) {
    throw new TypeError(`a business object is named <namespace>/<name>, not ${JSON.stringify(businessObject)}`)
  }
  return { namespace: businessObject.slice(0, slash), name: businessObject.slice(slash + 1) }
}
