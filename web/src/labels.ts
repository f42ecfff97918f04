/** A field name as a label: `lineItems` -> "Line items", `closeDate` -> "Close date". */
export const humanize = (name: string): string => {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/[_-]+/g, " ")
    .trim()
    .toLowerCase()
  return words.length === 0 ? name : words.charAt(0).toUpperCase() + words.slice(1)
}

/** The name part of `<namespace>/<name>`, as a label: `crm/deal` -> "Deal". */
export const businessObjectLabel = (businessObject: string): string =>
  humanize(businessObject.slice(businessObject.indexOf("/") + 1))

/** A long (random) id shortened for display; the full id goes in a title. */
export const shortId = (id: string): string => (id.length > 12 ? id.slice(0, 8) : id)

/** An English plural good enough for type names: deal -> deals, company -> companies, activity -> activities. */
export const plural = (word: string): string => {
  if (/[^aeiou]y$/i.test(word)) return `${word.slice(0, -1)}ies`
  if (/(s|x|z|ch|sh)$/i.test(word)) return `${word}es`
  return `${word}s`
}
