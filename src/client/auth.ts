import { Redacted } from "effect"
import type { Transport } from "./transport"
import { SignIn } from "./wire"
import type { Me } from "./wire"

export interface Credentials {
  /** The workspace slug, e.g. "demo". */
  readonly workspace: string
  readonly email: string
  readonly password: string
}

export interface AuthClient {
  /** `POST /api/auth/login`: sets the HttpOnly session cookie of that workspace; a failure is a 401 ApiError. */
  readonly login: (credentials: Credentials) => Promise<Me>
  /** `POST /api/auth/logout`: ends the session. */
  readonly logout: () => Promise<void>
  /** `GET /api/auth/me`: who the session is (401 ApiError when signed out). */
  readonly me: () => Promise<Me>
  /** `GET /api/auth/session`: who the session cookie is, or null when signed out (answered 200 either way). */
  readonly session: () => Promise<Me | null>
}

export const authClient = (transport: Transport): AuthClient => ({
  login: ({ workspace, email, password }) =>
    transport.call((api) =>
      api.auth.login({ payload: new SignIn({ workspace, email, password: Redacted.make(password) }) })
    ),
  logout: () => transport.call((api) => api.auth.logout()),
  me: () => transport.call((api) => api.auth.me()),
  session: async () => (await transport.call((api) => api.auth.session())).me
})
