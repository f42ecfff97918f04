import { Schema } from "effect"
import type { Fields } from "./Field"
import { FieldsSchema } from "./Field"

/** One business object type as a plugin declares it. */
export interface BusinessObjectDeclaration {
  readonly fields: Fields
}

/** A plugin: a namespace and the business object types it brings. */
export interface Plugin {
  readonly namespace: string
  readonly businessObjects: { readonly [name: string]: BusinessObjectDeclaration }
}

/** A business object type by its full name `<namespace>/<name>`, on the wire. */
export class BusinessObjectDefinition extends Schema.Class<BusinessObjectDefinition>("BusinessObjectDefinition")({
  name: Schema.String,
  fields: FieldsSchema
}) {}
