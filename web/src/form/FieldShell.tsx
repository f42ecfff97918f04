import type { ReactNode } from "react"

interface Props {
  /** The input's id, which the label names. */
  readonly id: string
  readonly label: string
  readonly kind: string
  readonly required: boolean
  /** What the field's rules refuse in the value (docs/fields.md), shown under it. */
  readonly error?: string | undefined
  /** The input, given the attributes that tie it to the label's marker and the error. */
  readonly children: (described: {
    readonly "aria-required": boolean | undefined
    readonly "aria-invalid": boolean | undefined
    readonly "aria-describedby": string | undefined
  }) => ReactNode
}

/** A labelled input of one field: its required marker and, when the value is refused, why. */
export const FieldShell = ({ id, label, kind, required, error, children }: Props) => {
  const errorId = `${id}-error`
  return (
    <div className={`field field-${kind}${error === undefined ? "" : " invalid"}`}>
      <span className="field-label">
        <label htmlFor={id}>{label}</label>
        {/* Outside the label, so the field's name stays its label: aria-required says it. */}
        {required ? (
          <span className="required-mark" aria-hidden="true">
            *
          </span>
        ) : null}
      </span>
      {children({
        "aria-required": required ? true : undefined,
        "aria-invalid": error === undefined ? undefined : true,
        "aria-describedby": error === undefined ? undefined : errorId
      })}
      {error === undefined ? null : (
        <p className="field-error" id={errorId}>
          {error}
        </p>
      )}
    </div>
  )
}
