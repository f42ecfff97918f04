import { useEditorsOf, useMe } from "../queries"
import { editorsSentence, isThisBrowsers } from "./editorsSentence"

interface Props {
  readonly businessObject: string
  readonly id: string
  /** This browser (`browserEditorId`): the forms of all its tabs are left out. */
  readonly browserId: string
}

/** Who else has this record open with unsaved changes, live (presence broadcasts and a refetch every heartbeat interval). */
export const EditorsNotice = ({ businessObject, id, browserId }: Props) => {
  const editors = useEditorsOf(businessObject, id)
  const me = useMe().data?.id
  const sentence = editorsSentence(editors, me, browserId)
  const nobody = editors.every((editor) => isThisBrowsers(editor.id, browserId))
  return (
    <p className={nobody ? "editors empty" : "editors"} role="status" aria-label="Other editors">
      {sentence}
    </p>
  )
}
