import type { Fields } from "../../../src/api/Field"
import { newEntryId } from "./entryId"
import type { MemberEditor } from "./FieldEditorProps"
import { useReadOnly } from "./readOnly"
import type { Json, JsonObject } from "../../../src/api/Json"
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

const entriesOf = (value: Json | undefined): ReadonlyArray<JsonObject> =>
  Array.isArray(value) ? value.filter((entry: Json): entry is JsonObject => isJsonObject(entry)) : []

/**
 * A child collection: one group per entry with its members and a remove
 * button, and a button that adds an entry with a new id. The collection is
 * sent whole on save; entries keep their ids, so the diff says which entry
 * was added, modified or removed.
 */
export const CollectionEditor = ({ label, fields, value, onChange, memberEditor: FieldEditor, error }: Props) => {
  const entries = entriesOf(value)
  const readOnly = useReadOnly()
  const replace = (index: number, entry: JsonObject) => onChange(entries.map((old, i) => (i === index ? entry : old)))
  return (
    <fieldset className="collection">
      <legend>{label}</legend>
      {error === undefined ? null : <p className="field-error">{error}</p>}
      {entries.length === 0 ? <p className="muted">No entries.</p> : null}
      {entries.map((entry, index) => {
        const entryLabel = `${label} ${index + 1}`
        return (
          <fieldset key={String(entry.id ?? index)} className="entry" aria-label={entryLabel}>
            <legend className="visually-hidden">{entryLabel}</legend>
            {Object.entries(fields).map(([name, field]) => (
              <FieldEditor
                key={name}
                name={name}
                field={field}
                value={own(entry, name)}
                onChange={(member) => replace(index, { ...entry, [name]: member })}
              />
            ))}
            {readOnly ? null : (
              <button
                type="button"
                className="link danger"
                aria-label={`Remove ${entryLabel}`}
                onClick={() => onChange(entries.filter((_, i) => i !== index))}
              >
                Remove
              </button>
            )}
          </fieldset>
        )
      })}
      {readOnly ? null : (
        <button type="button" className="secondary" onClick={() => onChange([...entries, { id: newEntryId() }])}>
          Add to {label.toLowerCase()}
        </button>
      )}
    </fieldset>
  )
}
