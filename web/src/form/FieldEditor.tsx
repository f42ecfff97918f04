import { humanize } from "../labels"
import { ChoiceSelect } from "./ChoiceSelect"
import { CollectionEditor } from "./CollectionEditor"
import type { FieldEditorProps } from "./FieldEditorProps"
import { LinkPicker } from "./LinkPicker"
import { ScalarInput } from "./ScalarInput"
import { StructEditor } from "./StructEditor"

/** The editor of one field, by its kind. */
export const FieldEditor = ({ name, field, value, onChange, error }: FieldEditorProps) => {
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
          error={error}
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
          error={error}
        />
      )
    case "choice":
      return (
        <ChoiceSelect
          label={label}
          options={field.options}
          value={value}
          onChange={onChange}
          required={field.required === true}
          error={error}
        />
      )
    case "link":
      return (
        <LinkPicker
          label={label}
          target={field.target}
          value={value}
          onChange={onChange}
          required={field.required === true}
          error={error}
        />
      )
    default:
      return (
        <ScalarInput
          kind={field.kind}
          label={label}
          value={value}
          onChange={onChange}
          required={field.required === true}
          error={error}
        />
      )
  }
}
