import { useId } from "react"
import type { Json } from "../../../src/api/Json"
import { ApiError } from "../../../src/client"
import { own } from "../../../src/api/own"
import { useTitles } from "../titles/TitlesContext"
import { typeLabelOf } from "../titles/typeLabel"
import { useDefinition, useLinkedRecord, useRecords } from "../queries"
import { recordTitle } from "../records/recordTitle"
import { FieldShell } from "./FieldShell"
import { useReadOnly } from "./readOnly"

interface Props {
  readonly label: string
  /** The linked business object, `crm/company`. */
  readonly target: string
  readonly value: Json | undefined
  readonly onChange: (value: Json) => void
  readonly required: boolean
  readonly error?: string | undefined
}

/**
 * A link field: a select of the live (operational) records of its target
 * type, newest first, by title. The record it links to now is shown even
 * when it is no longer live: archived, a draft, or missing (deleted since,
 * docs/fields.md: a link stays when its target goes), by the title the
 * record's answer carried (`TitlesProvider`), never by its id.
 */
export const LinkPicker = ({ label, target, value, onChange, required, error }: Props) => {
  const id = useId()
  const readOnly = useReadOnly()
  const definition = useDefinition(target)
  const records = useRecords(target)
  const selected = typeof value === "string" ? value : ""
  const live = (records.data ?? []).filter((record) => record.state === "operational")
  const listed = live.some((record) => record.id === selected)
  const linked = useLinkedRecord(target, selected, selected !== "" && records.isSuccess && !listed)
  const titles = useTitles()
  const fields = definition.data?.fields ?? {}
  const targetLabel = typeLabelOf(target, definition.data).toLowerCase()

  /** The record linked now that is not live: by its title, with its state; a deleted one by its last title. */
  const linkedText = (): string => {
    if (linked.data !== undefined) return `${recordTitle(fields, linked.data)} (${linked.data.state})`
    const known = own(titles, selected)
    if (linked.error instanceof ApiError && linked.error.status === 404)
      return known === undefined ? `missing ${targetLabel}` : `${known.title} (deleted ${targetLabel})`
    return known?.title ?? `a ${targetLabel}`
  }

  return (
    <FieldShell id={id} label={label} kind="link" required={required} error={error}>
      {(described) =>
        records.isError ? (
          <input
            id={id}
            type="text"
            disabled={readOnly}
            {...described}
            value={selected === "" ? "" : (own(titles, selected)?.title ?? `a ${targetLabel}`)}
            readOnly
          />
        ) : (
          <select
            id={id}
            disabled={readOnly}
            {...described}
            value={selected}
            onChange={(event) => onChange(event.target.value === "" ? null : event.target.value)}
          >
            <option value="">(none)</option>
            {selected !== "" && !listed ? <option value={selected}>{linkedText()}</option> : null}
            {live.map((record) => (
              <option key={record.id} value={record.id}>
                {recordTitle(fields, record)}
              </option>
            ))}
          </select>
        )
      }
    </FieldShell>
  )
}
