import { SqlClient, SqlSchema } from "effect/sql"
import { PrimaryReadSqlClient } from "../db/Database"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { BadRequest, Conflict, NotFound } from "../api/errors"
import { platformSchema } from "../tenancy/migrations/platform"
import { hashPassword } from "./Password"
import { excerpt } from "../messages/inputExcerpt"

export class User extends Schema.Class<User>("User")({
  id: Schema.String,
  email: Schema.String,
  name: Schema.String
}) {}

/** A user as the admin command line lists them: the workspaces they belong to by slug. */
export class UserListing extends Schema.Class<UserListing>("UserListing")({
  ...User.fields,
  workspaces: Schema.Array(Schema.String)
}) {}

const UserWithHash = Schema.Struct({ ...User.fields, passwordHash: Schema.String })

export const minimumPasswordLength = 8
const emailPattern = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const normalizeEmail = (email: string) => email.trim().toLowerCase()

/** People who sign in. Platform-wide: one user may belong to several workspaces. */
export class Users extends Context.Service<Users>()("Users", {
  make: Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const read = yield* PrimaryReadSqlClient
    const users = sql(`${platformSchema}.users`)

    /** The new user; none when the email is taken (a duplicate the caller can act on, told by the statement). */
    const insert = SqlSchema.findOneOption({
      Request: Schema.Struct({ email: Schema.String, name: Schema.String, passwordHash: Schema.String }),
      Result: User,
      execute: (user) => sql`INSERT INTO ${users} ${sql.insert(user)}
          ON CONFLICT (email) DO NOTHING RETURNING id, email, name`
    })

    const create = (input: { email: string; name: string; password: string }) =>
      Effect.gen(function* () {
        const email = normalizeEmail(input.email)
        const name = input.name.trim()
        if (!emailPattern.test(email) || email.length > 254) {
          return yield* new BadRequest({ message: `invalid email: ${excerpt(input.email)}` })
        }
        if (name.length === 0 || name.length > 200) {
          return yield* new BadRequest({ message: "a user's name is 1-200 characters" })
        }
        if (input.password.length < minimumPasswordLength) {
          return yield* new BadRequest({ message: `a password has at least ${minimumPasswordLength} characters` })
        }
        const passwordHash = yield* hashPassword(input.password)
        const created = yield* insert({ email, name, passwordHash }).pipe(Effect.orDie)
        if (Option.isNone(created))
          return yield* new Conflict({ message: `a user with email ${excerpt(email)} already exists` })
        return created.value
      })

    const credentialsByEmail = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: UserWithHash,
      execute: (email) => read`SELECT id, email, name, password_hash FROM ${users} WHERE email = ${email}`
    })

    const userByEmail = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: User,
      execute: (email) => sql`SELECT id, email, name FROM ${users} WHERE email = ${email}`
    })

    /** The user and their password hash, for sign-in. */
    const findCredentials = (email: string) => credentialsByEmail(normalizeEmail(email)).pipe(Effect.orDie)

    const findByEmail = (email: string) => userByEmail(normalizeEmail(email)).pipe(Effect.orDie)

    const getByEmail = (email: string) =>
      findByEmail(email).pipe(
        Effect.flatMap(
          Option.match({
            onNone: () => Effect.fail(new NotFound({ message: `unknown user: ${excerpt(email)}` })),
            onSome: Effect.succeed
          })
        )
      )

    /** Every user, by email, with the slugs of their workspaces. */
    const list = SqlSchema.findAll({
      Request: Schema.Void,
      Result: UserListing,
      execute: () => read`SELECT u.id, u.email, u.name,
          COALESCE(array_agg(w.slug ORDER BY w.slug) FILTER (WHERE w.slug IS NOT NULL), '{}') AS workspaces
        FROM ${users} u
        LEFT JOIN ${sql(`${platformSchema}.memberships`)} m ON m.user_id = u.id
        LEFT JOIN ${sql(`${platformSchema}.workspaces`)} w ON w.id = m.workspace_id
        GROUP BY u.id ORDER BY u.email`
    })(undefined).pipe(Effect.orDie)

    return { create, findCredentials, findByEmail, getByEmail, list } as const
  })
}) {
  static readonly layer = Layer.effect(this, this.make)
}
