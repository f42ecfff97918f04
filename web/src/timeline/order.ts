import type { Field, Fields } from "../../../src/api/Field"
import type { Plain } from "./shape"
import { own } from "../../../src/api/own"

/**
 * An object's members in the order its fields are declared (the service
 * stores JSON with sorted keys); members the schema no longer knows (a
 * renamed or removed field) follow in their own order.
 */
export const inFieldOrder = <A>(
  members: { readonly [key: string]: A },
  fields: Fields | undefined
): ReadonlyArray<readonly [string, A]> => {
  const all = Object.entries(members)
  if (fields === undefined) return all
  const declared = Object.keys(fields)
  const rank = (name: string) => {
    const index = declared.indexOf(name)
    return index === -1 ? declared.length : index
  }
  return [...all].sort(([a], [b]) => rank(a) - rank(b))
}

/** The fields of a struct's or a collection entry's members; none for a scalar or an unknown field. */
export const memberFields = (field: Field | undefined): Fields | undefined =>
  field !== undefined && (field.kind === "struct" || field.kind === "collection") ? field.fields : undefined

/** How a person recognises a collection entry: its first text member. */
export const entryText = (values: Plain | undefined, fields: Fields | undefined): string | undefined => {
  const isText = (name: string) => {
    const field = fields === undefined ? undefined : own(fields, name)
    return field === undefined || field.kind === "string"
  }
  const text = inFieldOrder(values ?? {}, fields).find(
    ([name, member]) => name !== "id" && typeof member === "string" && member.length > 0 && isText(name)
  )
  return text === undefined ? undefined : String(text[1])
}
