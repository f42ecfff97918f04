import { Effect, Schema } from "effect"

/** The most field paths one erasure names, and the longest path: an erasure is a few fields, named by hand. */
export const maxErasedFields = 64
export const maxFieldPathLength = 256

/**
 * What an erasure asks for (`POST .../:id/erase`, docs/ledger.md,
 * "Erasure"): field paths from the record (`email`, `address.street` for a
 * struct member, `lineItems.product` for a member of every entry of a
 * collection); none: every value of the record.
 */
export class EraseRecord extends Schema.Class<EraseRecord>("EraseRecord")({
  fields: Schema.Array(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(maxFieldPathLength)))
    .check(Schema.isMaxLength(maxErasedFields))
    .pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed([])))
}) {}

/** What an erasure did: never a value, only where values were erased and how the record stands now. */
export class ErasedRecord extends Schema.Class<ErasedRecord>("ErasedRecord")({
  businessObject: Schema.String,
  id: Schema.String,
  /** The paths erased, as asked (none: every value). */
  fields: Schema.Array(Schema.String),
  /** The `erased` entry on the record's timeline. */
  entry: Schema.String,
  /** Audit rows whose values were erased now (a row erased before keeps its markers). */
  rows: Schema.Int,
  /** Single values erased now, over all those rows. */
  values: Schema.Int,
  /** The record's version now; null: it is deleted (before, or by this erasure of every value). */
  version: Schema.NullOr(Schema.Int)
}) {}
