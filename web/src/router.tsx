import type { AnchorHTMLAttributes, MouseEvent } from "react"
import { useSyncExternalStore } from "react"

/**
 * A router of six routes, on the History API (the service answers every
 * path outside /api with the page, so a reload lands where it was):
 * `/`, `/records/<namespace>/<name>`, `/records/<namespace>/<name>/<id>`,
 * `/new/<namespace>/<name>` (outside `/records/`, so that no record id can
 * ever collide with it), `/activity` (the workspace feed) and
 * `/correlations/<id>` (one unit of work and its cascade).
 */
export type Route =
  | { readonly page: "home" }
  | { readonly page: "list"; readonly businessObject: string }
  | { readonly page: "new"; readonly businessObject: string }
  | { readonly page: "record"; readonly businessObject: string; readonly id: string }
  | { readonly page: "activity" }
  | { readonly page: "correlation"; readonly correlationId: string }

export const parseRoute = (pathname: string): Route => {
  const parts = pathname
    .split("/")
    .filter((part) => part.length > 0)
    .map(decodeURIComponent)
  const [first, namespace, name, id] = parts
  if (first === "activity" && parts.length === 1) return { page: "activity" }
  if (first === "correlations" && namespace !== undefined && parts.length === 2) {
    return { page: "correlation", correlationId: namespace }
  }
  if (namespace === undefined || name === undefined) return { page: "home" }
  const businessObject = `${namespace}/${name}`
  if (first === "new" && parts.length === 3) return { page: "new", businessObject }
  if (first !== "records" || parts.length > 4) return { page: "home" }
  return id === undefined ? { page: "list", businessObject } : { page: "record", businessObject, id }
}

export const listPath = (businessObject: string) => `/records/${businessObject}`
export const activityPath = "/activity"
export const correlationPath = (correlationId: string) => `/correlations/${encodeURIComponent(correlationId)}`
export const newRecordPath = (businessObject: string) => `/new/${businessObject}`
export const recordPath = (businessObject: string, id: string) => `/records/${businessObject}/${encodeURIComponent(id)}`

const changeEvent = "locationchange"

const subscribe = (onChange: () => void) => {
  window.addEventListener("popstate", onChange)
  window.addEventListener(changeEvent, onChange)
  return () => {
    window.removeEventListener("popstate", onChange)
    window.removeEventListener(changeEvent, onChange)
  }
}

export const usePathname = () => useSyncExternalStore(subscribe, () => window.location.pathname)

/** The query string (`?sort=amount`, or ""): a page's state that a link can carry (list sort, Activity filters). */
export const useSearch = () => useSyncExternalStore(subscribe, () => window.location.search)

export const navigate = (to: string, options: { readonly replace?: boolean } = {}) => {
  if (options.replace === true) window.history.replaceState(null, "", to)
  else window.history.pushState(null, "", to)
  window.dispatchEvent(new Event(changeEvent))
}

/** An ordinary link that the page follows itself (a modified click still opens a new tab). */
export const Link = ({ to, ...props }: AnchorHTMLAttributes<HTMLAnchorElement> & { readonly to: string }) => {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (
      event.defaultPrevented ||
      event.button !== 0 ||
      event.metaKey ||
      event.ctrlKey ||
      event.shiftKey ||
      event.altKey
    ) {
      return
    }
    event.preventDefault()
    navigate(to)
  }
  return <a {...props} href={to} onClick={onClick} />
}
