import { useEffect } from "react"

/** What one tab tells the others of this origin when the session changed under them. */
type SessionChange = "signed-in" | "signed-out"

const isSessionChange = (data: unknown): data is SessionChange => data === "signed-in" || data === "signed-out"

/** The tab's one channel: a tab never hears its own announcements (old browsers: none at all). */
const channel = typeof BroadcastChannel === "undefined" ? undefined : new BroadcastChannel("records-session")

/** Tells the page's other tabs that this one signed in or out (the cookie is the origin's: it changed for them too). */
export const announceSession = (change: SessionChange) => channel?.postMessage(change)

/** Calls `onChange` whenever another tab announces a sign-in or a sign-out. */
export const useSessionAnnouncements = (onChange: () => void) => {
  useEffect(() => {
    const listener = (event: MessageEvent) => {
      if (isSessionChange(event.data)) onChange()
    }
    channel?.addEventListener("message", listener)
    return () => channel?.removeEventListener("message", listener)
  }, [onChange])
}
