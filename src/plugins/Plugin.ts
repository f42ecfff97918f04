import { Schema } from "effect"
import type { Effect } from "effect"
import type { Operation } from "../context/Cause"
import type { BusinessObjectEvent } from "../events/BusinessObjectEvent"
import type { Fields } from "../fields/Field"
import { FieldsSchema } from "../fields/Field"
import type { PluginRecords, StoredRecord, WriteError } from "./PluginRecords"

/** An action on one record, run inside an action frame (so every write it causes has a cause). */
export interface ActionDeclaration {
  readonly description: string
  readonly run: (target: StoredRecord) => Effect.Effect<StoredRecord, WriteError, PluginRecords>
}

/** One business object type as a plugin declares it. */
export interface BusinessObjectDeclaration {
  readonly fields: Fields
  readonly actions?: { readonly [name: string]: ActionDeclaration }
}

/**
 * Runs inside the unit of work for every matching event, in an event frame:
 * what it writes names the event as its cause. Its failure fails the unit.
 */
export interface ListenerDeclaration {
  readonly name: string
  readonly businessObject: string
  readonly operations: ReadonlyArray<Operation>
  readonly run: (event: BusinessObjectEvent) => Effect.Effect<void, WriteError, PluginRecords>
}

/** A plugin: a namespace, the business object types it brings, and its listeners. */
export interface Plugin {
  readonly namespace: string
  readonly businessObjects: { readonly [name: string]: BusinessObjectDeclaration }
  readonly listeners?: ReadonlyArray<ListenerDeclaration>
}

/** A business object type by its full name `<namespace>/<name>`, on the wire. */
export class BusinessObjectDefinition extends Schema.Class<BusinessObjectDefinition>("BusinessObjectDefinition")({
  name: Schema.String,
  fields: FieldsSchema,
  actions: Schema.Array(Schema.String)
}) {}
