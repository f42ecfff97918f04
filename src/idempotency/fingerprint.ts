import { createHash } from "node:crypto"
import type { Hash } from "node:crypto"

/** An object as a copy with its keys inserted in sorted order (an object still lists integer keys first). */
const sortedCopy = (inner: object): Record<string, unknown> => {
  const sorted: Record<string, unknown> = {}
  for (const key of Object.keys(inner).sort()) sorted[key] = Reflect.get(inner, key)
  return sorted
}

/** `JSON.stringify`'s replacer of `canonicalJson`: each object as its sorted copy. */
const sortedKeys = (_key: string, inner: unknown) =>
  inner === null || typeof inner !== "object" || Array.isArray(inner) ? inner : sortedCopy(inner)

/**
 * JSON with every object's keys in sorted order, so two requests meaning the
 * same thing (keys sent in another order) get one text. Taken from the
 * decoded payload, never the raw bytes: whitespace, key order and defaulted
 * fields do not make a retry "another body".
 */
export const canonicalJson = (value: unknown): string => JSON.stringify(value, sortedKeys) ?? "null"

/** An object or array written member by member: one with a `toJSON` is written as what that gives, whole. */
const isContainer = (value: unknown): value is object =>
  typeof value === "object" && value !== null && !("toJSON" in value && typeof value.toJSON === "function")

/** What JSON leaves out of an object (and writes as null in an array). */
const isUnwritten = (value: unknown) => value === undefined || typeof value === "function" || typeof value === "symbol"

/**
 * `canonicalJson(value)` into `hash` a piece at a time, the members and
 * elements of its containers each on its own down to `depth`: the same
 * bytes, never the whole text as one string. A bulk request's is a third of
 * a megabyte for 1,000 records, a string V8 allocates among the large
 * objects, which only a full collection frees.
 */
const hashCanonical = (hash: Hash, value: unknown, depth: number): void => {
  if (depth === 0 || !isContainer(value)) {
    hash.update(canonicalJson(value))
  } else if (Array.isArray(value)) {
    hash.update("[")
    for (let index = 0; index < value.length; index++) {
      if (index > 0) hash.update(",")
      hashCanonical(hash, value[index], depth - 1)
    }
    hash.update("]")
  } else {
    hash.update("{")
    let first = true
    // The keys in the copy's order, as `JSON.stringify` writes it: an object lists integer keys first, whatever the sort.
    const sorted = sortedCopy(value)
    for (const key of Object.keys(sorted)) {
      const member: unknown = Reflect.get(sorted, key)
      if (isUnwritten(member)) continue
      hash.update(`${first ? "" : ","}${JSON.stringify(key)}:`)
      first = false
      hashCanonical(hash, member, depth - 1)
    }
    hash.update("}")
  }
}

/** SHA-256 (hex) of the canonical JSON of a request's decoded payload; `undefined` (no body) is `null`. */
export const payloadHash = (payload: unknown): string => {
  const hash = createHash("sha256")
  // Deep enough for a bulk request's items, one by one.
  hashCanonical(hash, payload ?? null, 2)
  return hash.digest("hex")
}
