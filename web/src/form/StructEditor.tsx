import type { Fields } from "../../../src/api/Field"
import { FieldEditor } from "./FieldEditor"
import type { Json } from "./values"
import { isJsonObject } from "./values"
import { own } from "../../../src/api/own"

interface Props {
  readonly label: string
  readonly fields: Fields
  readonly value: Json | undefined
  readonly onChange: (value: Json) => void
}

/** A struct: its members in a group named after the field; a member edit replaces the whole value. */
export const StructEditor = ({ label, fields, value, onChange }: Props) => {
  const members = isJsonObject(value) ? value : {}
  return (
    <fieldset className="struct">
      <legend>{label}</legend>
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
