import { createHash } from "node:crypto"

/**
 * JSON with every object's keys in sorted order, so two requests meaning the
 * same thing (keys sent in another order) get one text. Taken from the
 * decoded payload, never the raw bytes: whitespace, key order and defaulted
 * fields do not make a retry "another body".
 */
export const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) => {
    if (inner === null || typeof inner !== "object" || Array.isArray(inner)) return inner
    const sorted: Record<string, unknown> = {}
    for (const key of Object.keys(inner).sort()) sorted[key] = Reflect.get(inner, key)
    return sorted
  }) ?? "null"

/** SHA-256 (hex) of the canonical JSON of a request's decoded payload; `undefined` (no body) is `null`. */
export const payloadHash = (payload: unknown): string =>
  createHash("sha256")
    .update(canonicalJson(payload ?? null))
    .digest("hex")
