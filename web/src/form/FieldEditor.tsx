import { humanize } from "../labels"
import { CollectionEditor } from "./CollectionEditor"
import type { FieldEditorProps } from "./FieldEditorProps"
import { ScalarInput } from "./ScalarInput"
import { StructEditor } from "./StructEditor"

/** The editor of one field, by its kind. */
export const FieldEditor = ({ name, field, value, onChange }: FieldEditorProps) => {
  const label = humanize(name)
  switch (field.kind) {
    case "struct":
      return (
        <StructEditor
          label={label}
          fields={field.fields}
          value={value}
          onChange={onChange}
          memberEditor={FieldEditor}
        />
      )
    case "collection":
      return (
        <CollectionEditor
          label={label}
          fields={field.fields}
          value={value}
          onChange={onChange}
          memberEditor={FieldEditor}
        />
      )
    default:
      return <ScalarInput kind={field.kind} label={label} value={value} onChange={onChange} />
  }
}
