/** How much of one name or value from a request an error message may repeat. */
export const excerptLimit = 64

/** At most `limit` characters of `text`, marked when cut. */
export const shorten = (text: string, limit = 200): string =>
  text.length <= limit ? text : `${text.slice(0, limit)}… (${text.length - limit} more characters)`

/**
 * A name from the request (a business object, record id, action, slug...)
 * as an error message may show it: as it is when short, else a short prefix.
 * Messages never echo what a client sent at length (docs/security.md).
 */
export const excerpt = (text: string): string =>
  text.length <= excerptLimit ? text : `${text.slice(0, excerptLimit)}…`

/** A name or value from the input, quoted for an error message: short, and with control characters escaped. */
export const quote = (text: string): string => JSON.stringify(text.length <= 40 ? text : `${text.slice(0, 40)}…`)
