import { Schema } from "effect"

/**
 * Entity tags (RFC 9110, 8.8.3) as the service uses them: a record's ETag is
 * its version as a strong tag, `"7"`; a write's `If-Match` names the version
 * the caller last read.
 */

/** The strong ETag of a record version: `7` -> `"7"`. */
export const versionTag = (version: number): string => `"${version}"`

/** What an `If-Match` header asks for: any current version (`*`), or exactly this one. */
export type VersionPrecondition =
  | { readonly _tag: "AnyVersion" }
  | { readonly _tag: "Version"; readonly version: number }

const versionDigits = /^(0|[1-9]\d{0,15})$/

const versionOf = (digits: string): number | undefined => {
  if (!versionDigits.test(digits)) return undefined
  const version = Number(digits)
  return Number.isSafeInteger(version) ? version : undefined
}

/**
 * The precondition of an `If-Match` value: `*`, a quoted version `"7"` (the
 * ETag as served) or the bare digits `7`; surrounding spaces are ignored.
 * Anything else, a weak tag or a list included, is undefined: malformed.
 */
export const parseIfMatch = (header: string): VersionPrecondition | undefined => {
  const value = header.trim()
  if (value === "*") return { _tag: "AnyVersion" }
  const quoted = /^"([^"]*)"$/.exec(value)
  const version = versionOf(quoted === null ? value : (quoted[1] ?? ""))
  return version === undefined ? undefined : { _tag: "Version", version }
}

/** The `If-Match` request header: a malformed one is a 400 and nothing runs. */
export const IfMatch = Schema.String.check(
  Schema.makeFilter((value) => parseIfMatch(value) !== undefined, {
    message: 'the If-Match header is a record\'s ETag ("7"), its version (7) or *'
  })
).annotate({
  identifier: "IfMatch",
  description:
    "Makes the write conditional on the record's version: the ETag (or `version`) of the record as last read. " +
    "When the record has moved on, nothing is written and the answer is 412 with the current version and the " +
    "timeline entries written since. `*` accepts any version. Without it the write applies to whatever is current."
})

/**
 * Whether an `If-None-Match` value names `etag` (weak comparison, as
 * RFC 9110 13.1.2 asks for it): a list of tags, `W/` prefixes allowed, or `*`.
 */
export const ifNoneMatchNames = (header: string, etag: string): boolean => {
  const value = header.trim()
  if (value === "*") return true
  const opaque = (tag: string) => tag.trim().replace(/^W\//, "")
  return value.split(",").some((tag) => opaque(tag) === opaque(etag))
}
