/**
 * One text per JSON value, whatever the key order it was built or stored
 * with: keys sorted by UTF-16 code units, no whitespace, numbers and strings
 * as `JSON.stringify` writes them (what PostgreSQL's jsonb gives back parses
 * to the same value). Keys holding `undefined` are left out, as JSON does.
 */
export const canonicalJson = (value: unknown): string => {
  if (value === undefined || value === null) return "null"
  if (typeof value !== "object") return JSON.stringify(value)
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  const parts: Array<string> = []
  for (const [key, member] of Object.entries(value).sort(byKey)) {
    if (member !== undefined) parts.push(`${JSON.stringify(key)}:${canonicalJson(member)}`)
  }
  return `{${parts.join(",")}}`
}

/** Entries in key order (UTF-16 code units, as `Array.prototype.sort` compares strings). */
export const byKey = (a: readonly [string, unknown], b: readonly [string, unknown]): number =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0
