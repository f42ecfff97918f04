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
  // The keys sorted alone (the default order is by UTF-16 code units), not entries by a comparator: every
  // audit row is hashed through here on the write path (BENCHMARKS.md, "Ledger").
  let text = ""
  for (const key of Object.keys(value).sort()) {
    const member: unknown = Reflect.get(value, key)
    if (member !== undefined) text += `${text === "" ? "" : ","}${JSON.stringify(key)}:${canonicalJson(member)}`
  }
  return `{${text}}`
}

/** Entries in key order (UTF-16 code units, as `Array.prototype.sort` compares strings). */
export const byKey = (a: readonly [string, unknown], b: readonly [string, unknown]): number =>
  a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0
