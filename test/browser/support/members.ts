import { SqlClient } from "effect/sql"
import { Effect } from "effect"
import { Memberships } from "../../../src/auth/Memberships"
import { Roles } from "../../../src/auth/Roles"
import { Users } from "../../../src/auth/Users"
import { platformSchema } from "../../../src/tenancy/migrations/platform"
import type { Workspace } from "../../../src/api/Workspace"
import { testPassword, uniqueSuffix } from "../../support/TestApp"

/** Who signs in to the page: what the sign-in form asks for, and the name the page shows. */
export interface Person {
  readonly name: string
  readonly email: string
  readonly password: string
  readonly workspace: string
}

/**
 * A new member of `workspace` holding `role`, with a person's name (what the
 * page shows of an editor or an actor), deleted when the scope closes.
 */
export const namedMember = (workspace: Workspace, name: string, role: string) =>
  Effect.gen(function* () {
    const users = yield* Users
    const sql = yield* SqlClient.SqlClient
    const user = yield* Effect.acquireRelease(
      users.create({ email: `browser-${uniqueSuffix()}@example.com`, name, password: testPassword }),
      (u) => sql`DELETE FROM ${sql(`${platformSchema}.users`)} WHERE id = ${u.id}`.pipe(Effect.orDie)
    )
    yield* (yield* Memberships).add(workspace.id, user.id)
    yield* (yield* Roles).assign(workspace, { kind: "user", id: user.id }, role)
    const person: Person = { name, email: user.email, password: testPassword, workspace: workspace.slug }
    return person
  })

/** A new admin of `workspace` (every grant), as `namedMember`. */
export const namedAdmin = (workspace: Workspace, name: string) => namedMember(workspace, name, "admin")
