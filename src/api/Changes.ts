import { Schema } from "effect"
import { Json, JsonObject } from "./Json"

/** A changed scalar or struct: the whole value on each side, null where absent. */
export const ValueChange = Schema.Struct({ from: Json, to: Json }).annotations({ identifier: "ValueChange" })
export interface ValueChange extends Schema.Schema.Type<typeof ValueChange> {}

/** An entry new to a collection; its `values` hold the entry's members, never its `id`. */
export const AddedEntry = Schema.Struct({
  id: Schema.String,
  values: JsonObject.pipe(
    Schema.filter((values) => !Object.hasOwn(values, "id") || "an added entry's values exclude its id")
  )
}).annotations({ identifier: "AddedEntry" })
export interface AddedEntry extends Schema.Schema.Type<typeof AddedEntry> {}

export const RemovedEntry = Schema.Struct({ id: Schema.String }).annotations({ identifier: "RemovedEntry" })
export interface RemovedEntry extends Schema.Schema.Type<typeof RemovedEntry> {}

/** An entry kept in a collection whose members changed; `changes` is diffed with the collection's own fields. */
export interface ModifiedEntry {
  readonly id: string
  readonly changes: Changes
}

export const ModifiedEntry: Schema.Schema<ModifiedEntry> = Schema.Struct({
  id: Schema.String,
  changes: Schema.suspend((): Schema.Schema<Changes> => Changes)
}).annotations({ identifier: "ModifiedEntry" })

/** A changed child collection. Empty buckets are never present, and at least one bucket is. */
export interface CollectionChanges {
  readonly added?: ReadonlyArray<AddedEntry>
  readonly modified?: ReadonlyArray<ModifiedEntry>
  readonly removed?: ReadonlyArray<RemovedEntry>
}

const bucket = <A>(entry: Schema.Schema<A>) =>
  Schema.optionalWith(Schema.Array(entry).pipe(Schema.minItems(1)), { exact: true })

export const CollectionChanges: Schema.Schema<CollectionChanges> = Schema.Struct({
  added: bucket(AddedEntry),
  modified: bucket(ModifiedEntry),
  removed: bucket(RemovedEntry)
}).pipe(
  Schema.filter(
    (c) =>
      c.added !== undefined ||
      c.modified !== undefined ||
      c.removed !== undefined ||
      "an unchanged collection is omitted, never an empty change"
  ),
  Schema.annotations({ identifier: "CollectionChanges" })
)

export type FieldChange = ValueChange | CollectionChanges

/** The field diff of a record: field name to its change. Never empty: an unchanged object is null instead. */
export interface Changes {
  readonly [field: string]: FieldChange
}

export const Changes: Schema.Schema<Changes> = Schema.Record({
  key: Schema.String,
  value: Schema.Union(ValueChange, CollectionChanges)
}).pipe(
  Schema.filter((changes) => Object.keys(changes).length > 0 || "an unchanged object is null, never an empty diff"),
  Schema.annotations({ identifier: "Changes" })
)

/** A ValueChange always has `from` and `to`; a CollectionChanges never has either. */
export const isValueChange = (change: FieldChange): change is ValueChange => "from" in change

export const isCollectionChanges = (change: FieldChange): change is CollectionChanges => !isValueChange(change)
