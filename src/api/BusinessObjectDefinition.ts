import { Schema } from "effect"
import { FieldsSchema } from "./Field"

/** A business object type by its full name `<namespace>/<name>`, on the wire. */
export class BusinessObjectDefinition extends Schema.Class<BusinessObjectDefinition>("BusinessObjectDefinition")({
  name: Schema.String,
  fields: FieldsSchema,
  actions: Schema.Array(Schema.String)
}) {}
