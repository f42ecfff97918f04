import { Schema } from "effect"

/**
 * The kinds of field a business object has (decisions.md, "business object").
 * A struct is a nested value; a collection holds child entries, each with an
 * `id`, diffed by id.
 */
export type Field =
  | {
      readonly kind: "string"
      /** The longest value, in characters (UTF-16 code units); `defaultStringMaxLength` when not set. */
      readonly maxLength?: number
    }
  | { readonly kind: "number" }
  | { readonly kind: "boolean" }
  | { readonly kind: "decimal" }
  | { readonly kind: "date" }
  | { readonly kind: "datetime" }
  | { readonly kind: "struct"; readonly fields: Fields }
  | { readonly kind: "collection"; readonly fields: Fields }

export type Fields = { readonly [name: string]: Field }

/** The longest string a field takes unless it sets its own `maxLength` (a longer value is 422). */
export const defaultStringMaxLength = 64 * 1024

export type FieldKind = Field["kind"]

/** The wire form of a field list, as served by `GET /api/business-objects`. */
export const FieldSchema: Schema.Schema<Field> = Schema.Union(
  Schema.Struct({ kind: Schema.Literal("string"), maxLength: Schema.optional(Schema.Int.pipe(Schema.positive())) }),
  Schema.Struct({ kind: Schema.Literal("number", "boolean", "decimal", "date", "datetime") }),
  Schema.Struct({
    kind: Schema.Literal("struct", "collection"),
    fields: Schema.Record({ key: Schema.String, value: Schema.suspend(() => FieldSchema) })
  })
).annotations({ identifier: "Field" })

export const FieldsSchema = Schema.Record({ key: Schema.String, value: FieldSchema })

/** Shorthands for declaring fields in a plugin. */
export const field = {
  string: { kind: "string" },
  /** A string field with its own limit: `field.stringWith({ maxLength: 200 })`. */
  stringWith: (options: { readonly maxLength: number }): Field => ({ kind: "string", maxLength: options.maxLength }),
  number: { kind: "number" },
  boolean: { kind: "boolean" },
  decimal: { kind: "decimal" },
  date: { kind: "date" },
  datetime: { kind: "datetime" },
  struct: (fields: Fields): Field => ({ kind: "struct", fields }),
  collection: (fields: Fields): Field => ({ kind: "collection", fields })
} as const satisfies Record<
  string,
  Field | ((fields: Fields) => Field) | ((options: { readonly maxLength: number }) => Field)
>
