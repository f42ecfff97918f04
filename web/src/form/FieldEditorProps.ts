import type { ComponentType } from "react"
import type { Field } from "../../../src/api/Field"
import type { Json } from "../../../src/api/Json"

export interface FieldEditorProps {
  readonly name: string
  readonly field: Field
  readonly value: Json | undefined
  readonly onChange: (value: Json) => void
  /** What the field's rules refuse in its value (a member's issue included, named by its path). */
  readonly error?: string | undefined
}

/**
 * The editor of one member of a struct or collection entry. `FieldEditor`
 * hands itself to `StructEditor` and `CollectionEditor`, so the recursion
 * needs no circle of imports.
 */
export type MemberEditor = ComponentType<FieldEditorProps>
