import { Effect, Schema } from "effect"
import { Actor } from "./Actor"
import { RevertMode } from "./Cause"
import { errorFields } from "./errors"
import { JsonObject } from "./Json"
import { RecordTitles } from "./RecordTitle"
import { RecordVersion } from "./StoredRecord"

/**
 * A record's history as callers act on it (docs/history.md): the record as it
 * was at a point of its timeline (`?asOf=`), and reverts.
 */

/** Where `asOf` stands: just after one timeline entry, or at an instant. */
export type AsOfPoint =
  | { readonly _tag: "Entry"; readonly entry: string }
  | { readonly _tag: "Instant"; readonly at: string }

const entryId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const instant = /^(?!0000)(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,6})?(Z|[+-](\d{2}):(\d{2}))$/

/** A calendar day that exists (2026-02-30 does not), a time of day, and an offset real zones have (±14:00 at most). */
const isRealInstant = (match: RegExpExecArray): boolean => {
  const [, day = "", hours = "", minutes = "", seconds = "", , , offsetHours = "0", offsetMinutes = "0"] = match
  const parsed = new Date(`${day}T00:00:00Z`)
  return (
    !Number.isNaN(parsed.getTime()) &&
    parsed.toISOString().slice(0, 10) === day &&
    Number(hours) < 24 &&
    Number(minutes) < 60 &&
    Number(seconds) < 60 &&
    Number(offsetMinutes) < 60 &&
    Number(offsetHours) * 60 + Number(offsetMinutes) <= 14 * 60
  )
}

/**
 * The `asOf` parameter: a timeline entry's `id` (a UUID: the record just after
 * that entry) or an ISO-8601 instant with its zone (`2026-11-23T20:10:15Z`,
 * `…15.123456+01:00`, to the microsecond). Undefined for anything else.
 */
export const parseAsOf = (value: string): AsOfPoint | undefined => {
  if (entryId.test(value)) return { _tag: "Entry", entry: value.toLowerCase() }
  const match = instant.exec(value)
  return match !== null && isRealInstant(match) ? { _tag: "Instant", at: value } : undefined
}

export const AsOf = Schema.String.check(
  Schema.makeFilter((value) => parseAsOf(value) !== undefined, {
    message: "asOf is a timeline entry's id (a UUID) or an ISO-8601 instant with its zone, e.g. 2026-11-23T20:10:15Z"
  })
).annotate({
  identifier: "AsOf",
  description:
    "Read the record as it was: just after the timeline entry with this `id`, or at this ISO-8601 instant " +
    "(with Z or an offset up to ±14:00; to the microsecond). Answers a RecordAsOf instead of the record, without an ETag."
})

/** The timeline entry a record as of a point stands on: the last one at or before it. */
export class AsOfEntry extends Schema.Class<AsOfEntry>("AsOfEntry")({
  id: Schema.String,
  at: Schema.String,
  actor: Actor
}) {}

/**
 * A record as it was just after `entry`, rebuilt from its timeline's
 * snapshots and diffs. `state` is its lifecycle state then; `version` the
 * version that entry gave it (null: written before records had versions).
 */
export class RecordAsOf extends Schema.Class<RecordAsOf>("RecordAsOf")({
  id: Schema.String,
  businessObject: Schema.String,
  state: Schema.Literals(["operational", "archived"]),
  version: Schema.NullOr(RecordVersion),
  values: JsonObject,
  entry: AsOfEntry,
  /** Its title from its values then. */
  title: Schema.optionalKey(Schema.String),
  /** Today's titles of the records its link values then name. */
  titles: Schema.optionalKey(RecordTitles)
}) {}

/**
 * `POST .../records/:ns/:name/:id/revert`: `restore` sets the record's values
 * to what they were just after `entry`; `undo` takes back only the changes of
 * that `updated` entry, refused (409 `ChangedSince`) when a later entry
 * changed one of its fields again, unless `force`.
 */
export class RevertRecord extends Schema.Class<RevertRecord>("RevertRecord")({
  // Any UUID (Schema.isUUID would also check its version and variant bits).
  entry: Schema.String.annotate({ format: "uuid", description: "the id of an entry on this record's timeline" }).check(
    Schema.isPattern(/^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/u)
  ),
  mode: RevertMode,
  force: Schema.Boolean.pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed(false)))
}) {}

/**
 * An undo refused: fields the undone entry changed were changed again by
 * later entries (`fields`, top-level field names in declared order). Send
 * `force: true` to overwrite them with their values from before the entry.
 */
export class ChangedSince extends Schema.TaggedError<ChangedSince>()(
  "ChangedSince",
  { ...errorFields, fields: Schema.Array(Schema.String) },
  { httpApiStatus: 409 }
) {}
