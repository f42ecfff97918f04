import { randomId } from "../../../src/client"

const storageKey = "records.editorId"

/**
 * The editor id of this browser: one for all its tabs (kept in
 * localStorage), so that others see one editor however many tabs a person
 * has open, and a person's own page never lists any of their tabs as
 * someone else (docs/web.md, "Decisions"). Without storage (a locked-down
 * browser) each page makes its own.
 */
export const browserEditorId = (): string => {
  try {
    const kept = window.localStorage.getItem(storageKey)
    if (kept !== null && /^[0-9a-f]{16,64}$/.test(kept)) return kept
    const made = randomId(16)
    window.localStorage.setItem(storageKey, made)
    return made
  } catch {
    return randomId(16)
  }
}
