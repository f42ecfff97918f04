import { useEditorsOf, useMe } from "../queries"
import { editorsSentence } from "./editorsSentence"

interface Props {
  readonly businessObject: string
  readonly id: string
  /** This page's own form (all tabs of this browser), left out. */
  readonly ownEditorId: string
}

/** Who else has this record open with unsaved changes, live (presence broadcasts and a refetch every heartbeat interval). */
export const EditorsNotice = ({ businessObject, id, ownEditorId }: Props) => {
  const editors = useEditorsOf(businessObject, id)
  const me = useMe().data?.id
  const sentence = editorsSentence(editors, me, ownEditorId)
  const nobody = editors.every((editor) => editor.id === ownEditorId)
  return (
    <p className={nobody ? "editors empty" : "editors"} role="status" aria-label="Other editors">
      {sentence}
    </p>
  )
}
