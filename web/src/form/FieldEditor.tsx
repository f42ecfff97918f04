import type { Field } from "../../../src/api/Field"
import { humanize } from "../labels"
import { CollectionEditor } from "./CollectionEditor"
import { ScalarInput } from "./ScalarInput"
import { StructEditor } from "./StructEditor"
import type { Json } from "./values"

interface Props {
  readonly name: string
  readonly field: Field
  readonly value: Json | undefined
  readonly onChange: (value: Json) => void
}

/** The editor of one field, by its kind. */
export const FieldEditor = ({ name, field, value, onChange }: Props) => {
  const label = humanize(name)
  switch (field.kind) {
    case "struct":
      return <StructEditor label={label} fields={field.fields} value={value} onChange={onChange} />
    case "collection":
      return <CollectionEditor label={label} fields={field.fields} value={value} onChange={onChange} />
    default:
      return <ScalarInput kind={field.kind} label={label} value={value} onChange={onChange} />
  }
}
