import { useId } from "react"
import type { Field } from "../../../src/api/Field"
import type { Json } from "../../../src/api/Json"
import { FieldShell } from "./FieldShell"
import { useReadOnly } from "./readOnly"

type TypedKind = Exclude<Field["kind"], "struct" | "collection" | "choice" | "link">

interface Props {
  readonly kind: TypedKind
  readonly label: string
  readonly value: Json | undefined
  readonly onChange: (value: Json) => void
  readonly required?: boolean
  readonly error?: string | undefined
}

const textOf = (value: Json | undefined): string =>
  typeof value === "string" ? value : typeof value === "number" ? String(value) : ""

/** An empty box means "no value" (null), which is what the service stores for it. */
const orNull = (text: string): Json => (text.trim().length === 0 ? null : text)

const numberOrNull = (text: string): Json => {
  if (text.trim().length === 0) return null
  const number = Number(text)
  return Number.isFinite(number) ? number : null
}

/** The wire form is what is typed: a hint of its shape where it is not obvious. */
const placeholders: Partial<Record<TypedKind, string>> = {
  datetime: "yyyy-MM-ddThh:mm:ssZ"
}

/** One input for a scalar field, by kind; decimals and datetimes are typed in their wire form. */
export const ScalarInput = ({ kind, label, value, onChange, required = false, error }: Props) => {
  const id = useId()
  const readOnly = useReadOnly()
  if (kind === "boolean") {
    return (
      <div className="field field-boolean">
        <input
          id={id}
          type="checkbox"
          disabled={readOnly}
          checked={value === true}
          onChange={(event) => onChange(event.target.checked)}
        />
        <label htmlFor={id}>{label}</label>
      </div>
    )
  }
  return (
    <FieldShell id={id} label={label} kind={kind} required={required} error={error}>
      {(described) =>
        kind === "number" ? (
          <input
            id={id}
            type="number"
            step="any"
            disabled={readOnly}
            {...described}
            value={textOf(value)}
            onChange={(event) => onChange(numberOrNull(event.target.value))}
          />
        ) : (
          <input
            id={id}
            type={kind === "date" ? "date" : "text"}
            inputMode={kind === "decimal" ? "decimal" : undefined}
            placeholder={placeholders[kind]}
            disabled={readOnly}
            {...described}
            value={textOf(value)}
            onChange={(event) => onChange(orNull(event.target.value))}
          />
        )
      }
    </FieldShell>
  )
}
