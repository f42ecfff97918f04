import { Effect } from "effect"
import { login } from "./login"
import type { Credentials } from "./login"

export interface TestResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}

/**
 * A real HTTP request with `fetch`; the body is parsed as JSON when there is
 * one. Like a browser on the service's own page it sends `Origin` (the
 * URL's), unless the headers name another or `origin: null` asks for none.
 */
export const request = (url: string, init: RequestInit & { json?: unknown; origin?: null } = {}) =>
  Effect.promise(async (): Promise<TestResponse> => {
    const { json, origin, ...rest } = init
    const headers = new Headers(rest.headers)
    if (json !== undefined) headers.set("content-type", "application/json")
    if (origin !== null && !headers.has("origin")) headers.set("origin", new URL(url).origin)
    const response = await fetch(url, { ...rest, headers, body: json !== undefined ? JSON.stringify(json) : rest.body })
    const text = await response.text()
    let body: unknown = text
    try {
      body = text.length > 0 ? JSON.parse(text) : undefined
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, headers: response.headers, body }
  })

/** The `session=...` pair of a login response, ready for a `cookie` header. */
export const sessionCookieOf = (response: TestResponse): string => {
  const setCookie = response.headers.get("set-cookie") ?? ""
  const pair = setCookie.split(";")[0] ?? ""
  if (!pair.startsWith("session=")) throw new Error(`no session cookie in ${setCookie}`)
  return pair
}

/** Signs in (through the contract's login route) and returns the session cookie; anything but a 200 is a defect. */
export const signIn = (base: string, credentials: Credentials) =>
  Effect.map(login(base, credentials), (response) => {
    if (response.status !== 200) throw new Error(`sign-in failed: ${response.status} ${JSON.stringify(response.body)}`)
    return sessionCookieOf(response)
  })
