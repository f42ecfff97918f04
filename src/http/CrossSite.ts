import { Option } from "effect"

/** The methods that change something; a browser sends `Origin` with each of them. */
export const stateChanging: ReadonlySet<string> = new Set(["POST", "PUT", "PATCH", "DELETE"])

/** What the check reads of a request: an `HttpServerRequest` is one, and so is a fast route's view of Node's request. */
export interface RequestHead {
  readonly method: string
  readonly url: string
  /** By lower-case name; read here: host, origin, authorization, sec-fetch-site, x-forwarded-proto. */
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly cookies: Readonly<Record<string, string | undefined>>
}

/** The service's own origin as the browser sees it: the Host header, over HTTPS when a proxy says so. */
export const ownOrigin = (request: RequestHead): Option.Option<string> => {
  const host = request.headers.host
  if (host === undefined || host === "") return Option.none()
  const forwarded = request.headers["x-forwarded-proto"]?.split(",")[0]?.trim().toLowerCase()
  const scheme = forwarded === "https" || request.url.startsWith("https:") ? "https" : "http"
  return Option.some(`${scheme}://${host}`.toLowerCase())
}

/**
 * Why a state-changing request is refused as cross-site, or none when it may
 * pass. A bearer credential is never sent by a browser on its own, so such a
 * request is no forgery. Otherwise the browser must say the request comes
 * from this service's page: `Sec-Fetch-Site: same-origin` (a header no page
 * can set), or an `Origin` that is the service's own or an allowed one. A
 * request with neither may only pass without the session cookie (curl, a
 * script signing in): browsers send `Origin` with every POST, PUT, PATCH and
 * DELETE, so a cookie-bearing request without it did not come from one of
 * our pages.
 */
export const crossSiteRefusal = (
  request: RequestHead,
  allowedOrigins: ReadonlyArray<string>
): Option.Option<string> => {
  if (!stateChanging.has(request.method)) return Option.none()
  if (/^bearer\s/i.test(request.headers.authorization ?? "")) return Option.none()
  const fetchSite = request.headers["sec-fetch-site"]
  if (fetchSite === "same-origin") return Option.none()
  const origin = request.headers.origin
  if (origin !== undefined) {
    const normalized = origin.toLowerCase()
    const own = ownOrigin(request)
    if ((Option.isSome(own) && own.value === normalized) || allowedOrigins.includes(normalized)) return Option.none()
    return Option.some(
      `cross-site request refused: Origin ${JSON.stringify(origin.slice(0, 100))} is not this service's`
    )
  }
  if (fetchSite !== undefined) {
    return Option.some(`cross-site request refused: Sec-Fetch-Site is ${JSON.stringify(fetchSite.slice(0, 20))}`)
  }
  if ((request.cookies.session ?? "") !== "") {
    return Option.some("a request signed in with the session cookie must carry an Origin header")
  }
  return Option.none()
}
