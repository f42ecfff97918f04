import { Option, Predicate, Schema, SchemaGetter } from "effect"
import { own } from "./own"

/** A JSON value, as values travel on the wire and sit in a record. */
export type Json = null | boolean | number | string | ReadonlyArray<Json> | JsonObject

export interface JsonObject {
  readonly [key: string]: Json
}

/** A record's values in wire form, keyed by field name. */
export type RecordValues = JsonObject

// Finite: JSON has no NaN or Infinity (a plain Schema.Number would encode them as strings).
export const Json: Schema.Codec<Json> = Schema.Union([
  Schema.Null,
  Schema.Boolean,
  Schema.Finite,
  Schema.String,
  Schema.Array(Schema.suspend((): Schema.Codec<Json> => Json)),
  Schema.Record(
    Schema.String,
    Schema.suspend((): Schema.Codec<Json> => Json)
  )
]).annotate({ identifier: "Json" })

export const JsonObject: Schema.Codec<JsonObject> = Schema.Record(Schema.String, Json)

/** "No value": a field that is absent, undefined or null. */
export const isAbsent = (value: Json | undefined): value is null | undefined => value === null || value === undefined

// Own guard: Array.isArray narrows a ReadonlyArray member of a union to any[].
export const isJsonArray = (value: Json | undefined): value is ReadonlyArray<Json> => Array.isArray(value)

export const isJsonObject = (value: Json | undefined): value is JsonObject =>
  typeof value === "object" && value !== null && !isJsonArray(value)

/**
 * Deep structural equality. Object key order is irrelevant and an object key
 * holding null equals an absent key; array order is significant.
 */
export const jsonEquals = (a: Json | undefined, b: Json | undefined): boolean => {
  if (isAbsent(a) || isAbsent(b)) return isAbsent(a) && isAbsent(b)
  if (isJsonArray(a)) return isJsonArray(b) && a.length === b.length && a.every((item, i) => jsonEquals(item, b[i]))
  if (isJsonObject(a)) {
    if (!isJsonObject(b)) return false
    const keys = new Set([...Object.keys(a), ...Object.keys(b)])
    return [...keys].every((key) => jsonEquals(own(a, key), own(b, key)))
  }
  return a === b
}

/** The normal form of a value: object keys holding null (or undefined) are dropped, at every depth. */
export const compact = (value: Json): Json => {
  if (isJsonArray(value)) return value.map(compact)
  return isJsonObject(value) ? compactObject(value) : value
}

/** `compact` of an object, which stays an object. */
export const compactObject = (value: JsonObject): JsonObject =>
  Object.fromEntries(
    Object.entries(value).flatMap(([key, member]) => (isAbsent(member) ? [] : [[key, compact(member)]]))
  )

/**
 * A member that JSON carries or leaves out, never as null: absent when the
 * value is undefined (as JSON.stringify leaves it out), and null refused.
 * `Schema.optional` alone would encode an undefined member as null.
 */
export const omittable = <S extends Schema.Top>(schema: S) =>
  Schema.optionalKey(schema).pipe(
    Schema.decodeTo(Schema.optional(Schema.toType(schema)), {
      decode: SchemaGetter.passthroughSupertype(),
      encode: SchemaGetter.transformOptional(Option.filter(Predicate.isNotUndefined))
    })
  )
