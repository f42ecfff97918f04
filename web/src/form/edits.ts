import type { Json, JsonObject } from "../../../src/api/Json"
import { normalize, sameValue } from "./values"
import { own } from "../../../src/api/own"

/**
 * A form's unsaved edits, field by field, laid over the record as last
 * fetched: a field nobody touched always shows the record's newest value, so
 * another tab's save shows up at once; a touched one keeps what was typed.
 */
export type Edits = JsonObject

/** The edited fields whose value differs from the record's: what a save sends (null clears a field). */
export const pendingChanges = (record: JsonObject, edits: Edits): JsonObject =>
  Object.fromEntries(
    Object.entries(edits).flatMap(
      ([name, value]): Array<[string, Json]> =>
        sameValue(value, own(record, name)) ? [] : [[name, normalize(value) ?? null]]
    )
  )

/**
 * The edits left once `saved` has been saved: the fields whose edit is still
 * exactly what was sent are done; anything typed since stays.
 */
export const withoutSaved = (edits: Edits, saved: JsonObject): Edits =>
  Object.fromEntries(
    Object.entries(edits).filter(([name, value]) => !(Object.hasOwn(saved, name) && sameValue(value, own(saved, name))))
  )
