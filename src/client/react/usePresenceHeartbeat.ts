import { useEffect, useRef, useState } from "react"
import type { Client } from "../index"
import { randomId } from "../randomId"

export interface PresenceHeartbeatOptions {
  readonly businessObject: string
  /** The record the form shows; undefined (a record not saved yet) never heartbeats. */
  readonly id: string | undefined
  /**
   * True while the form shows a persisted, operational record and holds
   * unsaved edits. Turning false (saved, discarded) leaves.
   */
  readonly active: boolean
  /** Default: a random id, made once per mount (two tabs, or two forms, are two editors). */
  readonly editorId?: string
  /**
   * Default: the interval the service serves in its stream's `resync`
   * (`client.broadcast.presenceIntervals().heartbeatMs`, read at each beat), or
   * `fallbackPresenceIntervals` until a stream got one.
   */
  readonly intervalMs?: number
  /** A failed heartbeat or leave (presence is best effort: the form keeps working). Default: ignored. */
  readonly onError?: (error: unknown) => void
}

const ignore = () => {}

/**
 * The presence of one open form (spec, tab behaviour 5). While `active`: a
 * heartbeat at once (arrival), then every `intervalMs` (by default the
 * served interval). It leaves (a
 * `keepalive` DELETE) when `active` turns false, when the form unmounts or
 * changes record, and when the tab fires `pagehide`; a page restored from
 * the back/forward cache (`pageshow` persisted) arrives again. A leave waits
 * for a heartbeat still in flight, so it is never overtaken by it.
 *
 * Returns the editor id, to tell one's own form apart in `useEditors`.
 */
export const usePresenceHeartbeat = (
  client: Client,
  options: PresenceHeartbeatOptions
): { readonly editorId: string } => {
  const [generated] = useState(() => randomId())
  const editorId = options.editorId ?? generated
  const { businessObject, id, active } = options
  const intervalMs = options.intervalMs
  // Read through a ref: an inline `onError` must not restart the heartbeat (a leave and an arrival) on every render.
  const onErrorRef = useRef(options.onError ?? ignore)
  useEffect(() => {
    onErrorRef.current = options.onError ?? ignore
  })

  useEffect(() => {
    const onError = (error: unknown) => onErrorRef.current(error)
    if (!active || id === undefined) return
    let pending: Promise<void> = Promise.resolve()
    let present = false
    const beat = () => {
      present = true
      pending = client.presence.heartbeat(businessObject, id, editorId).catch(onError)
    }
    const leave = (after: Promise<void>) => {
      if (!present) return
      present = false
      void after.then(() => client.presence.leave(businessObject, id, editorId)).catch(onError)
    }
    const onPageHide = () => leave(Promise.resolve())
    const onPageShow = (event: PageTransitionEvent) => {
      if (event.persisted) beat()
    }

    let timer: ReturnType<typeof setTimeout> | undefined
    const beatAndWait = () => {
      beat()
      // Read each time: the served interval arrives with the stream's first resync, maybe after the form opened.
      timer = setTimeout(beatAndWait, intervalMs ?? client.broadcast.presenceIntervals().heartbeatMs)
    }
    beatAndWait()
    window.addEventListener("pagehide", onPageHide)
    window.addEventListener("pageshow", onPageShow)
    return () => {
      clearTimeout(timer)
      window.removeEventListener("pagehide", onPageHide)
      window.removeEventListener("pageshow", onPageShow)
      leave(pending)
    }
  }, [client, businessObject, id, editorId, active, intervalMs])

  return { editorId }
}
