import { Effect, Schema } from "effect"
import { FieldsSchema } from "./Field"

/** A business object type by its full name `<namespace>/<name>`, on the wire. */
export class BusinessObjectDefinition extends Schema.Class<BusinessObjectDefinition>("BusinessObjectDefinition")({
  name: Schema.String,
  fields: FieldsSchema,
  /**
   * The top-level scalar fields a list shows, in order (docs/fields.md,
   * "Columns"); none from a service that predates them.
   */
  columns: Schema.Array(Schema.String).pipe(Schema.withDecodingDefaultTypeKey(Effect.succeed([]))),
  actions: Schema.Array(Schema.String),
  /** The type as a person names one ("Deal"); `name` is the technical one. */
  label: Schema.optionalKey(Schema.String),
  /** How a record's title is made: a top-level string field's name, or a `{field}` template. */
  title: Schema.optionalKey(Schema.String),
  /** What a person reads for each of `actions`, by action name ("close": "Close deal"). */
  actionLabels: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
}) {}
