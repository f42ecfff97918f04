import type { Fields } from "../../../src/api/Field"
import type { MemberEditor } from "./FieldEditorProps"
import type { Json } from "../../../src/api/Json"
import { isJsonObject } from "../../../src/api/Json"
import { own } from "../../../src/api/own"

interface Props {
  readonly label: string
  readonly fields: Fields
  readonly value: Json | undefined
  readonly onChange: (value: Json) => void
  /** Edits each member: `FieldEditor`. */
  readonly memberEditor: MemberEditor
  /** What the rules refuse in one of its members, named by its path. */
  readonly error?: string | undefined
}

/** A struct: its members in a group named after the field; a member edit replaces the whole value. */
export const StructEditor = ({ label, fields, value, onChange, memberEditor: FieldEditor, error }: Props) => {
  const members = isJsonObject(value) ? value : {}
  return (
    <fieldset className="struct">
      <legend>{label}</legend>
      {error === undefined ? null : <p className="field-error">{error}</p>}
      {Object.entries(fields).map(([name, field]) => (
        <FieldEditor
          key={name}
          name={name}
          field={field}
          value={own(members, name)}
          onChange={(member) => onChange({ ...members, [name]: member })}
        />
      ))}
    </fieldset>
  )
}
