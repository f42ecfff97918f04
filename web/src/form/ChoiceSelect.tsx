import { useId } from "react"
import type { Json } from "../../../src/api/Json"
import { FieldShell } from "./FieldShell"
import { useReadOnly } from "./readOnly"

interface Props {
  readonly label: string
  readonly options: ReadonlyArray<string>
  readonly value: Json | undefined
  readonly onChange: (value: Json) => void
  readonly required: boolean
  readonly error?: string | undefined
}

/**
 * A choice field: a select of its declared options, and "none" (no value).
 * A value that is no longer an option (the declaration changed) is shown as
 * it is, marked, until another is picked: the service refuses it on save.
 */
export const ChoiceSelect = ({ label, options, value, onChange, required, error }: Props) => {
  const id = useId()
  const readOnly = useReadOnly()
  const selected = typeof value === "string" ? value : ""
  const stale = selected !== "" && !options.includes(selected)
  return (
    <FieldShell id={id} label={label} kind="choice" required={required} error={error}>
      {(described) => (
        <select
          id={id}
          disabled={readOnly}
          {...described}
          value={selected}
          onChange={(event) => onChange(event.target.value === "" ? null : event.target.value)}
        >
          <option value="">(none)</option>
          {stale ? <option value={selected}>{selected} (no longer an option)</option> : null}
          {options.map((option) => (
            <option key={option} value={option}>
              {option}
            </option>
          ))}
        </select>
      )}
    </FieldShell>
  )
}
