import { Context, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../config/AppConfig"
import { Forbidden, Unauthorized } from "../api/errors"
import { Workspace } from "../api/Workspace"
import { Workspaces } from "../tenancy/Workspaces"
import { ApiKeys, parseApiKey } from "./ApiKeys"
import { LoginThrottle } from "./LoginThrottle"
import { Memberships } from "./Memberships"
import { decoyHash, verifyPassword } from "./Password"
import { Principal } from "../api/Principal"
import { Sessions } from "./Sessions"
import { SignOuts } from "./SignOuts"
import { Users } from "./Users"
import { hashToken } from "./Tokens"

const badSignIn = new Unauthorized({ message: "wrong workspace, email or password" })

/** Turns credentials (password, session token, API key) into a principal. */
export class Authentication extends Context.Service<Authentication>()("Authentication", {
  make: Effect.gen(function* () {
    const config = yield* AppConfig
    const users = yield* Users
    const sessions = yield* Sessions
    const memberships = yield* Memberships
    const apiKeys = yield* ApiKeys
    const workspaces = yield* Workspaces
    const throttle = yield* LoginThrottle
    const signOuts = yield* SignOuts

    /**
     * Checks the password and membership and starts a session. Every failure
     * reads the same, so the answer tells nobody which part was wrong. The
     * throttle comes first, before any lookup or hash: a refused attempt
     * (429) costs nothing and reads the same for every email.
     */
    const signIn = (input: {
      workspace: string
      email: string
      password: Redacted.Redacted
      address?: string | undefined
    }) =>
      Effect.gen(function* () {
        yield* throttle.admit(input)
        const user = yield* users.findCredentials(input.email)
        const hash = Option.isSome(user) ? user.value.passwordHash : yield* decoyHash
        const passwordOk = yield* verifyPassword(Redacted.value(input.password), hash)
        if (Option.isNone(user) || !passwordOk) return yield* badSignIn
        const workspace = yield* workspaces.findBySlug(input.workspace)
        if (Option.isNone(workspace)) return yield* badSignIn
        if (!(yield* memberships.isMember(workspace.value.id, user.value.id))) return yield* badSignIn
        const token = yield* sessions.start(user.value.id, workspace.value.id, config.sessionTtl)
        yield* throttle.succeeded(input)
        const principal = new Principal({
          kind: "user",
          id: user.value.id,
          name: user.value.name,
          email: user.value.email,
          workspace: workspace.value,
          credential: { _tag: "Session", tokenHash: hashToken(token) }
        })
        return { token, principal }
      })

    const fromSession = (token: Redacted.Redacted) =>
      Effect.gen(function* () {
        const value = Redacted.value(token)
        if (value.length === 0) {
          return yield* new Unauthorized({ message: "not signed in: send the session cookie or an API key" })
        }
        const tokenHash = hashToken(value)
        const session = yield* sessions.find(tokenHash)
        // Made only when needed: an error captures a stack trace, a cost every signed-in request would pay.
        if (Option.isNone(session))
          return yield* new Unauthorized({ message: "the session is unknown or has expired: sign in again" })
        const row = session.value
        // The row was decoded with these very types on its way out of the database: its checks are not run again per request.
        const trusted = { disableChecks: true }
        return new Principal(
          {
            kind: "user",
            id: row.userId,
            name: row.userName,
            email: row.userEmail,
            workspace: new Workspace(
              { id: row.workspaceId, slug: row.workspaceSlug, name: row.workspaceName },
              trusted
            ),
            credential: { _tag: "Session", tokenHash }
          },
          trusted
        )
      })

    const fromApiKey = (key: Redacted.Redacted) =>
      Effect.gen(function* () {
        const value = Redacted.value(key)
        if (value.length === 0) {
          return yield* new Unauthorized({ message: "not signed in: send the session cookie or an API key" })
        }
        const invalid = new Unauthorized({ message: "the API key is invalid or has been revoked" })
        const parsed = parseApiKey(value)
        if (Option.isNone(parsed)) return yield* invalid
        const workspace = yield* workspaces.findBySlug(parsed.value.workspaceSlug)
        if (Option.isNone(workspace)) return yield* invalid
        const holder = yield* apiKeys.verify(workspace.value, parsed.value.keyId, value)
        if (Option.isNone(holder)) return yield* invalid
        return new Principal({
          kind: holder.value.kind,
          id: holder.value.id,
          name: holder.value.name,
          workspace: workspace.value,
          credential: { _tag: "ApiKey", keyId: holder.value.keyId }
        })
      })

    /** Ends the request's session and its open streams; an API key has none. */
    const signOut = (principal: Principal) =>
      principal.credential._tag === "Session" ? signOuts.session(principal.credential.tokenHash) : Effect.void

    /** Ends every session of the signed-in user, in every workspace; an API key gets 403 (it has no sessions). */
    const signOutEverywhere = (principal: Principal) =>
      principal.credential._tag === "Session"
        ? Effect.asVoid(signOuts.everywhere(principal.id))
        : Effect.fail(new Forbidden({ message: "signing out everywhere needs a browser session: an API key has none" }))

    return { signIn, fromSession, fromApiKey, signOut, signOutEverywhere } as const
  })
}) {
  /** Its own services left to the caller to provide (a test that counts their lookups). */
  static readonly layerWithoutDependencies = Layer.effect(this, this.make)

  static readonly layer = this.layerWithoutDependencies.pipe(
    Layer.provide([
      Users.layer,
      Sessions.layer,
      Memberships.layer,
      ApiKeys.layer,
      Workspaces.layer,
      LoginThrottle.layer,
      SignOuts.layer
    ])
  )
}
