import { isJsonObject } from "../../../src/api/Json"
import type { Json, JsonObject } from "../../../src/api/Json"
import { own } from "../../../src/api/own"

const isPlainObject = (value: object): boolean => {
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/**
 * A value in wire form. Hydrated values are written back as their wire form:
 * a decimal or plain date class as its string, a `Date` as ISO-8601 UTC.
 */
export const toWire = (value: unknown): Json => {
  if (value === null || value === undefined) return null
  if (typeof value === "string" || typeof value === "boolean") return value
  if (typeof value === "number") return Number.isFinite(value) ? value : null
  if (value instanceof Date) return value.toISOString()
  if (Array.isArray(value)) return value.map(toWire)
  if (typeof value === "object" && isPlainObject(value)) {
    return Object.fromEntries(Object.entries(value).map(([key, member]) => [key, toWire(member)]))
  }
  return String(value)
}

export const toWireObject = (values: unknown): JsonObject => {
  const wire = toWire(values)
  return isJsonObject(wire) ? wire : {}
}

/**
 * A value with "no value" left out, as the service stores it: null members
 * dropped, an object left with no member is no value at all.
 */
export const normalize = (value: Json | undefined): Json | undefined => {
  if (value === null || value === undefined) return undefined
  if (Array.isArray(value)) return value.map((entry: Json) => normalize(entry) ?? null)
  if (isJsonObject(value)) {
    const members = Object.entries(value).flatMap(([key, member]) => {
      const kept = normalize(member)
      return kept === undefined ? [] : [[key, kept] as const]
    })
    return members.length === 0 ? undefined : Object.fromEntries(members)
  }
  return value
}

/** Object keys sorted, so that two equal values print alike. */
const canonical = (value: Json | undefined): string => {
  if (value === undefined) return "undefined"
  if (Array.isArray(value)) return `[${value.map((entry: Json) => canonical(entry)).join(",")}]`
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(own(value, key))}`).join(",")}}`
  }
  return JSON.stringify(value)
}

/** Equal as the service would store them. */
export const sameValue = (a: Json | undefined, b: Json | undefined): boolean =>
  canonical(normalize(a)) === canonical(normalize(b))
