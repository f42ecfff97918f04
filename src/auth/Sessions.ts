import { SqlClient, SqlSchema } from "effect/sql"
import { Clock, Context, Duration, Effect, Layer, Option, Schema } from "effect"
import { Caches } from "../cache/Caches"
import { cacheTag } from "../cache/cacheTags"
import { PrimaryReadSqlClient } from "../db/Database"
import { platformSchema } from "../tenancy/migrations/platform"
import { hashToken, randomToken } from "./Tokens"

const SessionRow = Schema.Struct({
  userId: Schema.String,
  userName: Schema.String,
  userEmail: Schema.String,
  workspaceId: Schema.String,
  workspaceSlug: Schema.String,
  workspaceName: Schema.String,
  expiresAt: Schema.Date
})

const ExpiryRow = Schema.Struct({ expiresAt: Schema.Date })

/**
 * Sign-in sessions, stored in PostgreSQL by the hash of their token, bound
 * to one workspace, valid until `expires_at` (checked by the database clock
 * when read, by this instance's clock while cached).
 */
export class Sessions extends Context.Service<Sessions>()("Sessions", {
  make: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const read = yield* PrimaryReadSqlClient
    const sessions = sql(`${platformSchema}.sessions`)
    const caches = yield* Caches

    /** Starts a session and returns its token, the only copy of which goes into the cookie. */
    const start = (userId: string, workspaceId: string, ttl: Duration.Duration) =>
      Effect.gen(function* () {
        const token = randomToken()
        const seconds = Duration.toSeconds(ttl)
        yield* sql`DELETE FROM ${sessions} WHERE user_id = ${userId} AND expires_at <= now()`
        yield* sql`INSERT INTO ${sessions} (token_hash, user_id, workspace_id, expires_at)
          VALUES (${hashToken(token)}, ${userId}, ${workspaceId}, now() + make_interval(secs => ${seconds}))`
        return token
      }).pipe(Effect.orDie)

    const lookup = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: SessionRow,
      execute: (tokenHash) =>
        read`SELECT u.id AS user_id, u.name AS user_name, u.email AS user_email,
                 w.id AS workspace_id, w.slug AS workspace_slug, w.name AS workspace_name, s.expires_at
          FROM ${sessions} s
          JOIN ${sql(`${platformSchema}.users`)} u ON u.id = s.user_id
          JOIN ${sql(`${platformSchema}.workspaces`)} w ON w.id = s.workspace_id
          JOIN ${sql(`${platformSchema}.memberships`)} m ON m.user_id = s.user_id AND m.workspace_id = s.workspace_id
          WHERE s.token_hash = ${tokenHash} AND s.expires_at > now()`
    })

    const cached = yield* caches.make({
      lookup: (tokenHash: string) => Effect.orDie(lookup(tokenHash)),
      tags: (tokenHash, session) =>
        Option.match(session, {
          onNone: () => [],
          onSome: (row) => [
            cacheTag.session(tokenHash),
            cacheTag.user(row.userId),
            cacheTag.member(row.workspaceId, row.userId),
            cacheTag.workspace(row.workspaceId)
          ]
        }),
      keep: Option.isSome
    })

    /**
     * The live session behind a token's hash (`hashToken`), with its user and
     * workspace; none when the token is unknown, expired, or its user is no
     * longer a member. Expiry is checked on every use, cached or not.
     */
    const find = (tokenHash: string) =>
      Effect.gen(function* () {
        const session = yield* cached.get(tokenHash)
        const now = yield* Clock.currentTimeMillis
        return Option.filter(session, (row) => row.expiresAt.getTime() > now)
      })

    const end = (tokenHash: string) =>
      sql`DELETE FROM ${sessions} WHERE token_hash = ${tokenHash}`.pipe(Effect.asVoid, Effect.orDie)

    /** When the live session behind a token's hash ends (as `find` sees it); none when it is no longer live. */
    const expiry = (tokenHash: string) =>
      SqlSchema.findOneOption({
        Request: Schema.String,
        Result: ExpiryRow,
        execute: (hash) => read`SELECT s.expires_at FROM ${sessions} s
          JOIN ${sql(`${platformSchema}.memberships`)} m ON m.user_id = s.user_id AND m.workspace_id = s.workspace_id
          WHERE s.token_hash = ${hash} AND s.expires_at > now()`
      })(tokenHash).pipe(Effect.map(Option.map((row) => row.expiresAt)), Effect.orDie)

    /** Ends every session of a user, in every workspace (sign out everywhere); how many there were. */
    const endAllOf = (userId: string) =>
      sql`DELETE FROM ${sessions} WHERE user_id = ${userId} RETURNING token_hash`.pipe(
        Effect.map((rows) => rows.length),
        Effect.orDie
      )

    /** Ends a user's sessions in one workspace (they leave it). Joins the caller's transaction. */
    const endIn = (userId: string, workspaceId: string) =>
      sql`DELETE FROM ${sessions} WHERE user_id = ${userId} AND workspace_id = ${workspaceId}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    return { start, find, end, expiry, endAllOf, endIn } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
