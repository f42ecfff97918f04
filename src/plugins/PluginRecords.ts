import type { Effect, Option } from "effect"
import { Context } from "effect"
import type { RecordValues } from "../api/Json"
import type { BadRequest, Conflict, NotFound, UnprocessableEntity } from "../api/errors"
import type { StoredRecord } from "../api/StoredRecord"

/** What can go wrong with a write inside a unit of work. */
export type WriteError = BadRequest | NotFound | Conflict | UnprocessableEntity

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

export class PluginRecords extends Context.Service<PluginRecords, PluginRecordsShape>()("PluginRecords") {}
