import type { HttpServerResponse } from "effect/http"
import { Option } from "effect"
import { createHash } from "node:crypto"
import { docsPath } from "./ApiDocs"

/** API answers (JSON, streams, errors): nothing in them may load or run anything, or be framed. */
export const apiPolicy = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"

/**
 * The web page (Vite's build of `web/`): its own scripts and stylesheets
 * only (no inline script or style: the build has none, and React sets no
 * style attributes), the `data:` favicon, and requests to its own origin
 * (the API and the broadcast stream).
 */
export const pagePolicy =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/**
 * The API reference at `/api/docs` is one page with Swagger UI inlined
 * (platform's `HttpApiSwagger`: no CDN): its inline scripts are allowed by
 * their hashes, its styles inline (Swagger UI sets style attributes), images
 * from `data:` URIs, and "Try it out" calls the same origin.
 */
export const docsPolicy = (scriptHashes: ReadonlyArray<string>) =>
  `default-src 'none'; script-src ${scriptHashes.map((hash) => `'${hash}'`).join(" ") || "'none'"}; ` +
  "style-src 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

/** The headers every response carries, whatever its kind. */
export const commonHeaders = (hstsMaxAge: Option.Option<number>): Record<string, string> => ({
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  ...(Option.isSome(hstsMaxAge) ? { "strict-transport-security": `max-age=${hstsMaxAge.value}` } : {})
})

/** The `sha256-...` sources of the executable inline scripts of an HTML page (JSON data blocks are not run). */
export const inlineScriptHashes = (html: string): ReadonlyArray<string> =>
  [...html.matchAll(/<script(\s[^>]*)?>([\s\S]*?)<\/script>/gi)]
    .filter((match) => !/type\s*=\s*"application\/json"/i.test(match[1] ?? ""))
    .map(
      (match) =>
        `sha256-${createHash("sha256")
          .update(match[2] ?? "")
          .digest("base64")}`
    )

/** The docs page never changes while the process runs: its script hashes are computed once. */
let docsHashes: ReadonlyArray<string> | undefined

const docsPolicyOf = (response: HttpServerResponse.HttpServerResponse) => {
  if (docsHashes === undefined && response.body._tag === "Uint8Array" && response.status === 200) {
    docsHashes = inlineScriptHashes(new TextDecoder().decode(response.body.body))
  }
  return docsPolicy(docsHashes ?? [])
}

/**
 * The security headers of an answer to `pathname`, for every response that
 * goes through the HTTP server: API answers, errors, 404s, the web page and
 * the docs page (the broadcast stream writes its own head with
 * `commonHeaders` and `apiPolicy`). Applied by the edge (`Edge.ts`).
 */
export const securityHeadersOf = (hstsMaxAge: Option.Option<number>) => {
  const common = commonHeaders(hstsMaxAge)
  const api = { ...common, "content-security-policy": apiPolicy }
  const page = { ...common, "content-security-policy": pagePolicy }
  return (pathname: string, response: HttpServerResponse.HttpServerResponse): Record<string, string> =>
    pathname === docsPath
      ? { ...common, "content-security-policy": docsPolicyOf(response) }
      : pathname === "/api" || pathname.startsWith("/api/")
        ? api
        : page
}
