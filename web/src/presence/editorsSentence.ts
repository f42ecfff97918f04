/** One live editor as the presence list gives it: the form's id and the user holding it. */
export interface ListedEditor {
  readonly id: string
  readonly name: string
  readonly userId: string
}

const listOf = (names: ReadonlyArray<string>): string =>
  names.length <= 1 ? (names[0] ?? "") : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`

/** How the viewer's own editing elsewhere is named. */
export const youElsewhere = "you, on another device"

/** Whether an editor id is one of this browser's forms (`tabEditorId`), in any of its tabs. */
export const isThisBrowsers = (editorId: string, browserId: string): boolean =>
  editorId === browserId || editorId.startsWith(`${browserId}-`)

const capitalized = (text: string) => `${text.charAt(0).toUpperCase()}${text.slice(1)}`

/**
 * What the record page says of the other live editors of a record, to the
 * viewer `me` in the browser `browserId`: the forms of all its tabs are
 * left out (`isThisBrowsers`), each other person is named
 * once however many forms they hold, and the viewer's forms on another
 * device read "you, on another device", never their own name.
 */
export const editorsSentence = (
  editors: ReadonlyArray<ListedEditor>,
  me: string | undefined,
  browserId: string
): string => {
  const others = editors.filter((editor) => !isThisBrowsers(editor.id, browserId))
  const people = new Map<string, string>()
  for (const editor of others) if (editor.userId !== me) people.set(editor.userId, editor.name)
  const mineElsewhere = others.some((editor) => editor.userId === me)
  const parts = [...people.values(), ...(mineElsewhere ? [youElsewhere] : [])]
  if (parts.length === 0) return "Nobody else is editing this record."
  const plural = parts.length > 1 || mineElsewhere
  const who = capitalized(listOf(parts))
  return `${who}${mineElsewhere ? "," : ""} ${plural ? "are" : "is"} editing this record.`
}
