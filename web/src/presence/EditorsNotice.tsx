import { useOtherEditors } from "../queries"

const listOf = (names: ReadonlyArray<string>): string =>
  names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`

/** Who else has this record open with unsaved changes, live (presence broadcasts and a refetch every heartbeat interval). */
interface Props {
  readonly businessObject: string
  readonly id: string
  /** This page's own form, left out. */
  readonly ownEditorId: string
}

export const EditorsNotice = ({ businessObject, id, ownEditorId }: Props) => {
  const editors = useOtherEditors(businessObject, id, ownEditorId)
  const names = editors.map((editor) => editor.name)
  return (
    <p className={names.length === 0 ? "editors empty" : "editors"} role="status" aria-label="Other editors">
      {names.length === 0
        ? "Nobody else is editing this record."
        : `${listOf(names)} ${names.length === 1 ? "is" : "are"} editing this record.`}
    </p>
  )
}
