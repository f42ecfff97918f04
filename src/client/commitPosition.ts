import { commitLsnHeader, formatLsn, parseLsn } from "../api/CommitPosition"

/**
 * Read-your-writes against a service that reads from a replica
 * (docs/client.md, "Reading your own writes"): the highest `X-Commit-LSN`
 * any answer from a service has carried, sent back on every later request to
 * it, so that its reads wait until the replica has replayed the caller's
 * writes. Kept per service (its base URL) for every client of this page, and
 * in a browser also in `localStorage`, so that a reload or another tab of the
 * same page reads them too. A service without a replica sends no such header,
 * and then the client sends none either.
 */
const highest = new Map<string, bigint>()

const storageKey = (service: string) => `audit-broadcast-service:commit-lsn:${service}`

/** The page's `localStorage`; none outside a browser, or where the browser refuses it (private modes). */
const storage = (): Storage | undefined => {
  try {
    return typeof document === "undefined" ? undefined : globalThis.localStorage
  } catch {
    return undefined
  }
}

const stored = (service: string): bigint | undefined => {
  try {
    return parseLsn(storage()?.getItem(storageKey(service)))
  } catch {
    return undefined
  }
}

/** The highest position known for `service`, from this page or (stored) another tab. */
const known = (service: string): bigint | undefined => {
  const here = highest.get(service)
  const there = stored(service)
  return here === undefined ? there : there === undefined || here >= there ? here : there
}

const seen = (service: string, header: string | null) => {
  const lsn = parseLsn(header)
  if (lsn === undefined) return
  const before = known(service)
  if (before !== undefined && before >= lsn) return
  highest.set(service, lsn)
  try {
    storage()?.setItem(storageKey(service), formatLsn(lsn))
  } catch {
    // Storage full or refused: this page still keeps it.
  }
}

/** The service's key: its base URL made absolute against the page ("" is the page's own origin). */
const serviceOf = (baseUrl: string) => {
  try {
    return new URL(baseUrl === "" ? "/" : baseUrl, globalThis.location?.href).href.replace(/\/+$/, "")
  } catch {
    return baseUrl
  }
}

/** `fetchFn`, sending the service's highest known commit position with each request and keeping each answer's. */
export const trackingCommitPositions = (baseUrl: string, fetchFn: typeof fetch): typeof fetch => {
  const service = serviceOf(baseUrl)
  return async (input, init) => {
    const lsn = known(service)
    let sent = init
    if (lsn !== undefined) {
      const headers = new Headers(init?.headers)
      headers.set(commitLsnHeader, formatLsn(lsn))
      sent = { ...init, headers }
    }
    const response = await fetchFn(input, sent)
    seen(service, response.headers.get(commitLsnHeader))
    return response
  }
}
