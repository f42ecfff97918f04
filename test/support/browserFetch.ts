/**
 * A `fetch` that keeps cookies as a browser tab does for one origin: every
 * `set-cookie` answer is stored (an expired one removes the cookie) and
 * every request sends the stored cookies. Enough for the session cookie of
 * the service; no paths, domains or expiry dates. Like a browser it sends
 * `Origin` (the page's: the request URL's own).
 */
export const browserFetch = (): typeof fetch => {
  const jar = new Map<string, string>()
  return async (input, init = {}) => {
    const headers = new Headers(init.headers)
    if (jar.size > 0) headers.set("cookie", [...jar].map(([name, value]) => `${name}=${value}`).join("; "))
    if (!headers.has("origin")) headers.set("origin", new URL(input instanceof Request ? input.url : input).origin)
    const response = await fetch(input, { ...init, headers })
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";")
      const at = pair.indexOf("=")
      const name = pair.slice(0, at).trim()
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a))
      if (expired || pair.slice(at + 1) === "") jar.delete(name)
      else jar.set(name, pair.slice(at + 1))
    }
    return response
  }
}
