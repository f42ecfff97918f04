import { Redacted } from "effect"
import { SignIn } from "../../src/api/AuthApi"
import { apiCaller, settled } from "./apiCaller"

export interface Credentials {
  readonly workspace: string
  readonly email: string
  readonly password: string
}

/**
 * `POST /api/auth/login` through the contract, without a session, sending
 * `Origin` as the service's own page does and `headers` on top (e.g. a
 * forwarded address): the answer whatever its status.
 */
export const login = (base: string, credentials: Credentials, headers: Record<string, string> = {}) =>
  settled(
    apiCaller(base, { origin: new URL(base).origin, ...headers })((api) =>
      api.auth.login({ payload: new SignIn({ ...credentials, password: Redacted.make(credentials.password) }) })
    )
  )
