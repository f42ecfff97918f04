import type { Field, Fields } from "../api/Field"
import { isJsonArray, isJsonObject } from "../api/Json"
import type { Json, JsonObject, RecordValues } from "../api/Json"
import { own } from "../api/own"
import { uuidv7 } from "./uuidv7"

/**
 * Values with an id on every collection entry, at any depth (collections in
 * structs and in other collections' entries too): an entry sent without one
 * is new and gets `newId()`; an id the caller gave is kept. Nothing else
 * changes. Runs on validated values (create, update, and so every action,
 * listener, job, chat turn and engine write), so the diff keys every entry
 * by an id and the answer tells the caller the ids it was given.
 */
export const assignEntryIds = (fields: Fields, values: RecordValues, newId: () => string = uuidv7): RecordValues =>
  withIds(fields, values, newId)

const withIds = (fields: Fields, values: JsonObject, newId: () => string): JsonObject =>
  Object.fromEntries(
    Object.entries(values).map(([name, value]) => {
      const field = own(fields, name)
      return [name, field === undefined ? value : valueWithIds(field, value, newId)]
    })
  )

const valueWithIds = (field: Field, value: Json, newId: () => string): Json => {
  switch (field.kind) {
    case "struct":
      return isJsonObject(value) ? withIds(field.fields, value, newId) : value
    case "collection":
      return isJsonArray(value)
        ? value.map((entry) => {
            if (!isJsonObject(entry)) return entry
            const id = own(entry, "id")
            return { ...withIds(field.fields, entry, newId), id: typeof id === "string" ? id : newId() }
          })
        : value
    default:
      return value
  }
}
