import { randomId } from "../../../src/client"

const storageKey = "records.editorId"

/**
 * The id of this browser: one for all its tabs (kept in localStorage), the
 * prefix of each of its forms' editor ids (`tabEditorId`), so that a
 * person's own page never lists any of their tabs as someone else
 * (docs/web.md, "Decisions"). Without storage (a locked-down browser) each
 * page makes its own.
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

/**
 * The editor id of one tab's form: the browser's id and a part of its own.
 * Each tab is its own editor to the service, so closing one tab leaves for
 * that tab only, while another still edits; others see the person once
 * however many tabs they hold (the notice names each person once).
 */
export const tabEditorId = (browserId: string): string => `${browserId}-${randomId(8)}`
