import type { Effect, Option } from "effect"
import { Context, Schema } from "effect"
import type { MissingActor } from "../context/MissingActor"
import { JsonObject } from "../diff"
import type { RecordValues } from "../diff"
import type { BadRequest, Conflict, NotFound, UnprocessableEntity } from "../errors"

export const RecordState = Schema.Literal("draft", "operational", "archived")
export type RecordState = typeof RecordState.Type

/** A record as the API serves it: values in wire form. */
export class StoredRecord extends Schema.Class<StoredRecord>("StoredRecord")({
  id: Schema.String,
  businessObject: Schema.String,
  state: RecordState,
  values: JsonObject,
  createdAt: Schema.String,
  updatedAt: Schema.String
}) {}

/** What can go wrong with a write inside a unit of work. */
export type WriteError = BadRequest | NotFound | Conflict | UnprocessableEntity | MissingActor

/**
 * What plugin code (listeners, actions) may do with records: read, create
 * and update, inside the unit of work that runs it, so its writes share the
 * unit's transaction, correlation id and frames.
 */
export interface PluginRecordsShape {
  readonly get: (businessObject: string, id: string) => Effect.Effect<Option.Option<StoredRecord>, NotFound>
  readonly create: (businessObject: string, values: RecordValues) => Effect.Effect<StoredRecord, WriteError>
  readonly update: (businessObject: string, id: string, values: RecordValues) => Effect.Effect<StoredRecord, WriteError>
}

export class PluginRecords extends Context.Tag("PluginRecords")<PluginRecords, PluginRecordsShape>() {}
