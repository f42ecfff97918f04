import type { Changes, FieldChange } from "../../api/Changes"
import type { Json, JsonObject } from "../../api/Json"
import { Decimal } from "./Decimal"
import type { HydratedChanges, HydratedObject, HydratedValue } from "./HydratedValue"
import { isHydratedValueChange } from "./HydratedValue"
import { PlainDate } from "./PlainDate"

/**
 * The wire form of a hydrated value: `Decimal` and `PlainDate` as their
 * strings, `Date` as ISO-8601 UTC (`…T09:30:00.000Z`, which the server
 * accepts). The inverse of hydration up to a datetime's digits: a `Date`
 * holds milliseconds, so a wire value with microseconds comes back rounded.
 * Used to send hydrated values back (`client.records.create/update` accept
 * them) and by the tests.
 */
export const toWire = (value: HydratedValue): Json => {
  if (value === null || typeof value !== "object") return value
  if (value instanceof Decimal || value instanceof PlainDate) return value.toString()
  if (value instanceof Date) return value.toISOString()
  if (isArray(value)) return value.map(toWire)
  return toWireObject(value)
}

// Own guard: Array.isArray narrows a ReadonlyArray member of a union to any[].
const isArray = (value: HydratedValue): value is ReadonlyArray<HydratedValue> => Array.isArray(value)

export const toWireObject = (values: HydratedObject): JsonObject => {
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [name, toWire(value)]))
}

/** The wire form of a hydrated diff. */
export const toWireChanges = (changes: HydratedChanges): Changes => {
  return Object.fromEntries(
    Object.entries(changes).map(([name, change]): [string, FieldChange] => {
      if (isHydratedValueChange(change)) return [name, { from: toWire(change.from), to: toWire(change.to) }]
      const { added, modified, removed } = change
      return [
        name,
        {
          ...(added === undefined
            ? {}
            : { added: added.map((entry) => ({ id: entry.id, values: toWireObject(entry.values) })) }),
          ...(modified === undefined
            ? {}
            : { modified: modified.map((entry) => ({ id: entry.id, changes: toWireChanges(entry.changes) })) }),
          ...(removed === undefined ? {} : { removed })
        }
      ]
    })
  )
}
