import { Schema } from "effect"
import { omittable } from "./Json"

/** A scalar kind with nothing to declare but whether it is required. */
interface PlainField<Kind extends string> {
  readonly kind: Kind
  /** A value must be given (not null, not an empty or blank string): docs/fields.md, "required". */
  readonly required?: boolean
}

/** A string field; `maxLength` in characters (UTF-16 code units), `defaultStringMaxLength` when not set. */
export interface StringField extends PlainField<"string"> {
  readonly maxLength?: number
}

/** A string that is one of `options`. */
export interface ChoiceField extends PlainField<"choice"> {
  readonly options: ReadonlyArray<string>
}

/** The id of a record of the business object `target` (`<namespace>/<name>`). */
export interface LinkField extends PlainField<"link"> {
  readonly target: string
}

/** A field that holds one value: the kinds `required` applies to. */
export type ScalarField =
  | StringField
  | PlainField<"number">
  | PlainField<"boolean">
  | PlainField<"decimal">
  | PlainField<"date">
  | PlainField<"datetime">
  | ChoiceField
  | LinkField

/**
 * The kinds of field a business object has (decisions.md, "business object";
 * docs/fields.md). A struct is a nested value; a collection holds child
 * entries, each with an `id`, diffed by id.
 */
export type Field =
  | ScalarField
  | { readonly kind: "struct"; readonly fields: Fields }
  | { readonly kind: "collection"; readonly fields: Fields }

export type Fields = { readonly [name: string]: Field }

/** The longest string a field takes unless it sets its own `maxLength` (a longer value is 422). */
export const defaultStringMaxLength = 64 * 1024

export type FieldKind = Field["kind"]
export type ScalarKind = ScalarField["kind"]

const required = omittable(Schema.Boolean)

/** The wire form of a field list, as served by `GET /api/business-objects`. */
export const FieldSchema: Schema.Codec<Field> = Schema.Union([
  Schema.Struct({
    kind: Schema.Literal("string"),
    maxLength: omittable(Schema.Int.check(Schema.isGreaterThan(0))),
    required
  }),
  Schema.Struct({ kind: Schema.Literals(["number", "boolean", "decimal", "date", "datetime"]), required }),
  Schema.Struct({
    kind: Schema.Literal("choice"),
    options: Schema.Array(Schema.String).check(Schema.isMinLength(1)),
    required
  }),
  Schema.Struct({ kind: Schema.Literal("link"), target: Schema.String, required }),
  Schema.Struct({
    kind: Schema.Literals(["struct", "collection"]),
    fields: Schema.Record(
      Schema.String,
      Schema.suspend((): Schema.Codec<Field> => FieldSchema)
    )
  })
]).annotate({ identifier: "Field" })

export const FieldsSchema = Schema.Record(Schema.String, FieldSchema)

/**
 * Shorthands for declaring fields in a plugin:
 *
 * ```ts
 * title: field.required(field.string),
 * stage: field.choice(["lead", "won", "lost"]),
 * company: field.link("crm/company"),
 * ```
 */
export const field = {
  string: { kind: "string" },
  /** A string field with its own limit: `field.stringWith({ maxLength: 200 })`. */
  stringWith: (options: { readonly maxLength: number }): StringField => ({
    kind: "string",
    maxLength: options.maxLength
  }),
  number: { kind: "number" },
  boolean: { kind: "boolean" },
  decimal: { kind: "decimal" },
  date: { kind: "date" },
  datetime: { kind: "datetime" },
  /** A string that must be one of `options` (at least one, distinct, none blank): `field.choice(["lead", "won"])`. */
  choice: (options: readonly [string, ...Array<string>]): ChoiceField => ({ kind: "choice", options }),
  /** The id of a live record of `target`, checked on every write: `field.link("crm/company")`. */
  link: (target: string): LinkField => ({ kind: "link", target }),
  /** The same field, now required: `field.required(field.choice(["lead", "won"]))`. */
  required: <F extends ScalarField>(scalar: F): F & { readonly required: true } => ({ ...scalar, required: true }),
  struct: (fields: Fields): Field => ({ kind: "struct", fields }),
  collection: (fields: Fields): Field => ({ kind: "collection", fields })
} as const satisfies { readonly [name: string]: Field | ((...args: never) => Field) }
