import { Schema } from "effect"
import { Json, JsonObject } from "./Json"

/** A changed scalar or struct: the whole value on each side, null where absent. */
export const ValueChange = Schema.Struct({ from: Json, to: Json }).annotate({ identifier: "ValueChange" })
export interface ValueChange extends Readonly<typeof ValueChange.Type> {}

/** An entry new to a collection; its `values` hold the entry's members, never its `id`. */
export const AddedEntry = Schema.Struct({
  id: Schema.String,
  values: JsonObject.check(
    Schema.makeFilter((values) => !Object.hasOwn(values, "id") || "an added entry's values exclude its id")
  )
}).annotate({ identifier: "AddedEntry" })
export interface AddedEntry extends Readonly<typeof AddedEntry.Type> {}

export const RemovedEntry = Schema.Struct({ id: Schema.String }).annotate({ identifier: "RemovedEntry" })
export interface RemovedEntry extends Readonly<typeof RemovedEntry.Type> {}

/** An entry kept in a collection whose members changed; `changes` is diffed with the collection's own fields. */
export interface ModifiedEntry {
  readonly id: string
  readonly changes: Changes
}

export const ModifiedEntry: Schema.Codec<ModifiedEntry> = Schema.Struct({
  id: Schema.String,
  changes: Schema.suspend((): Schema.Codec<Changes> => Changes)
}).annotate({ identifier: "ModifiedEntry" })

/** A changed child collection. Empty buckets are never present, and at least one bucket is. */
export interface CollectionChanges {
  readonly added?: ReadonlyArray<AddedEntry>
  readonly modified?: ReadonlyArray<ModifiedEntry>
  readonly removed?: ReadonlyArray<RemovedEntry>
}

const bucket = <A>(entry: Schema.Codec<A>) => Schema.optionalKey(Schema.Array(entry).check(Schema.isMinLength(1)))

export const CollectionChanges: Schema.Codec<CollectionChanges> = Schema.Struct({
  added: bucket(AddedEntry),
  modified: bucket(ModifiedEntry),
  removed: bucket(RemovedEntry)
})
  .check(
    Schema.makeFilter(
      (c) =>
        c.added !== undefined ||
        c.modified !== undefined ||
        c.removed !== undefined ||
        "an unchanged collection is omitted, never an empty change"
    )
  )
  .annotate({ identifier: "CollectionChanges" })

export type FieldChange = ValueChange | CollectionChanges

/** The field diff of a record: field name to its change. Never empty: an unchanged object is null instead. */
export interface Changes {
  readonly [field: string]: FieldChange
}

export const Changes: Schema.Codec<Changes> = Schema.Record(
  Schema.String,
  Schema.Union([ValueChange, CollectionChanges])
)
  .check(
    Schema.makeFilter(
      (changes) => Object.keys(changes).length > 0 || "an unchanged object is null, never an empty diff"
    )
  )
  .annotate({ identifier: "Changes" })

/** A ValueChange always has `from` and `to`; a CollectionChanges never has either. */
export const isValueChange = (change: FieldChange): change is ValueChange => "from" in change

export const isCollectionChanges = (change: FieldChange): change is CollectionChanges => !isValueChange(change)
