import { Schema } from "effect"
import { Actor } from "./Actor"
import { Cause, Operation } from "./Cause"
import { Changes } from "./Changes"
import { JsonObject, omittable } from "./Json"
import { RecordTitles } from "./RecordTitle"

/**
 * One row of a record's timeline, as the endpoint serves it. `record` is
 * present only for created and deleted, `changes` only for updated; there is
 * no null padding. `at` is the transaction timestamp, ISO-8601 UTC to the
 * microsecond.
 */
export class AuditEntry extends Schema.Class<AuditEntry>("AuditEntry")({
  id: Schema.String,
  at: Schema.String,
  actor: Actor,
  correlationId: Schema.String,
  businessObject: Schema.String,
  businessObjectId: Schema.String,
  operation: Operation,
  cause: Schema.NullOr(Cause),
  record: omittable(JsonObject),
  changes: omittable(Changes),
  /**
   * Titles, today's, of its own record (`businessObjectId`), of the record
   * an event cause names and of the records its link values name
   * (docs/titles.md). Absent on rows an older service served.
   */
  titles: Schema.optionalKey(RecordTitles)
}) {}

export class TimelinePage extends Schema.Class<TimelinePage>("TimelinePage")({
  entries: Schema.Array(AuditEntry),
  nextCursor: Schema.NullOr(Schema.String)
}) {}
