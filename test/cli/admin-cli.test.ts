import { CliError } from "effect/cli"
import { SqlClient } from "effect/sql"
import { expect, layer } from "@effect/vitest"
import { Cause, Effect, Exit, Layer, Option, Redacted } from "effect"
import { Authentication } from "../../src/auth/Authentication"
import { Memberships } from "../../src/auth/Memberships"
import { Roles } from "../../src/auth/Roles"
import { Users } from "../../src/auth/Users"
import { AppConfig } from "../../src/config/AppConfig"
import { withActor } from "../../src/context/Frames"
import { runCaptured } from "../../src/app/admin/runCaptured"
import { queueName } from "../../src/queue/DurableQueues"
import { Records } from "../../src/records/Records"
import { UnitOfWork } from "../../src/unitOfWork/UnitOfWork"
import { platformSchema } from "../../src/tenancy/migrations/platform"
import type { Workspace } from "../../src/api/Workspace"
import { schemaNameOf } from "../../src/api/WorkspaceSlug"
import { Workspaces } from "../../src/tenancy/Workspaces"
import { NodeServices } from "@effect/platform-node"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Feed, feedLine } from "../../src/audit/Feed"
import { feedStart } from "../../src/audit/FeedCursor"
import { runCli, runCliWithSecret, runUserCreate } from "../support/cli"
import { freshUserActor, queuedIn } from "../support/queue"
import { meaningfulLines, runProcess } from "../support/subprocess"
import { testDatabaseUrl, TestServices, uniqueSuffix } from "../support/TestApp"

/** What a failed command failed with: the error's tag, "ValidationError" for bad arguments (any CliError), or the defect. */
const outcome = <E>(exit: Exit.Exit<void, E>) =>
  Exit.isSuccess(exit)
    ? "success"
    : Option.match(Cause.findErrorOption(exit.cause), {
        onNone: () => `defect: ${Cause.pretty(exit.cause).split("\n")[0]}`,
        onSome: (error) =>
          CliError.isCliError(error)
            ? "ValidationError"
            : typeof error === "object" && error !== null && "_tag" in error
              ? String(error._tag)
              : String(error)
      })

const failureMessage = <E>(exit: Exit.Exit<void, E>) =>
  Exit.isFailure(exit)
    ? Option.match(Cause.findErrorOption(exit.cause), {
        onNone: () => undefined,
        onSome: (error) =>
          typeof error === "object" && error !== null && "message" in error ? String(error.message) : undefined
      })
    : undefined

/** A slug no one has used, whose workspace (row and schema) is dropped when the scope closes. */
const slugCleanedUp = Effect.gen(function* () {
  const workspaces = yield* Workspaces
  const sql = yield* SqlClient.SqlClient
  const slug = `t-${uniqueSuffix()}`
  yield* Effect.addFinalizer(() =>
    Effect.gen(function* () {
      const found = yield* workspaces.findBySlug(slug)
      if (Option.isSome(found)) yield* workspaces.drop(found.value)
      yield* sql`DROP SCHEMA IF EXISTS ${sql(schemaNameOf(slug))} CASCADE`.pipe(Effect.orDie)
    })
  )
  return slug
})

/** An email no one has used, whose user is deleted when the scope closes. */
const emailCleanedUp = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  const email = `cli-${uniqueSuffix()}@example.com`
  yield* Effect.addFinalizer(() =>
    sql`DELETE FROM ${sql(`${platformSchema}.users`)} WHERE email = ${email}`.pipe(Effect.orDie)
  )
  return email
})

/** `admin workspace create <slug>`, expected to succeed. */
const cliWorkspace = Effect.gen(function* () {
  const slug = yield* slugCleanedUp
  const run = yield* runCli("workspace", "create", slug)
  expect(outcome(run.exit)).toBe("success")
  return yield* (yield* Workspaces).get(slug)
})

/** `admin user create`, expected to succeed. */
const cliUser = (password: string) =>
  Effect.gen(function* () {
    const email = yield* emailCleanedUp
    const run = yield* runUserCreate(password, "--email", email, "--name", "Cli User")
    expect(outcome(run.exit)).toBe("success")
    return yield* (yield* Users).getByEmail(email)
  })

const countRows = (workspace: Workspace, table: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql(workspace.table(table))}`.pipe(
      Effect.map((rows) => rows[0]?.n),
      Effect.orDie
    )
  )

const password = "cli password 123"

layer(Layer.provideMerge(Authentication.layer, TestServices), { excludeTestServices: true })("admin CLI", (it) => {
  it.effect(
    "workspace create: the row, the migrated schema with the admin role, the seed data, and what was done",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const slug = yield* slugCleanedUp
        const run = yield* runCli("workspace", "create", "--name", "Acme Inc.", slug)
        expect(outcome(run.exit)).toBe("success")
        expect(run.stdout).toEqual([
          `workspace ${slug} created (schema ${schemaNameOf(slug)}, role admin holds every grant)`,
          "seed data: crm 2 new records"
        ])
        const workspace = yield* (yield* Workspaces).get(slug)
        expect(workspace.name).toBe("Acme Inc.")
        const grants = yield* sql`SELECT role, business_object, permission FROM ${sql(workspace.table("role_grants"))}
        ORDER BY permission`
        expect(grants).toEqual([
          { role: "admin", businessObject: "*", permission: "read" },
          { role: "admin", businessObject: "*", permission: "update" }
        ])

        const defaultName = yield* cliWorkspace
        expect(defaultName.name).toBe(defaultName.slug)
      })
  )

  it.effect("user create, role grant, member add: the user signs in holding the granted role", () =>
    Effect.gen(function* () {
      const authentication = yield* Authentication
      const roles = yield* Roles
      const workspace = yield* cliWorkspace
      const email = yield* emailCleanedUp

      const created = yield* runUserCreate(password, "--email", email, "--name", "Dana Scully")
      expect(outcome(created.exit)).toBe("success")
      const user = yield* (yield* Users).getByEmail(email)
      expect(user.name).toBe("Dana Scully")
      expect(created.stdout).toEqual([`user ${email} created (id ${user.id})`])
      const credentials = { workspace: workspace.slug, email, password: Redacted.make(password) }
      // Not a member yet.
      expect((yield* Effect.flip(authentication.signIn(credentials)))._tag).toBe("Unauthorized")

      const granted = yield* runCli(
        "role",
        "grant",
        "--workspace",
        workspace.slug,
        "--role",
        "deal-editor",
        "--business-object",
        "crm/deal",
        "--permission",
        "update"
      )
      expect(outcome(granted.exit)).toBe("success")
      expect(granted.stdout).toEqual([`role deal-editor in ${workspace.slug} may update crm/deal`])

      const added = yield* runCli(
        "member",
        "add",
        "--workspace",
        workspace.slug,
        "--email",
        email,
        "--role",
        "deal-editor"
      )
      expect(outcome(added.exit)).toBe("success")
      expect(added.stdout).toEqual([`${email} is a member of ${workspace.slug} with role deal-editor`])
      expect(yield* (yield* Memberships).isMember(workspace.id, user.id)).toBe(true)
      expect(yield* roles.grantsOf(workspace, { kind: "user", id: user.id })).toEqual([
        { businessObject: "crm/deal", permission: "update" }
      ])
      const { principal } = yield* authentication.signIn(credentials)
      expect(principal.id).toBe(user.id)
      expect(principal.workspace.slug).toBe(workspace.slug)
    })
  )

  it.effect("apikey create prints a key that authenticates; apikey revoke ends it", () =>
    Effect.gen(function* () {
      const authentication = yield* Authentication
      const workspace = yield* cliWorkspace
      const created = yield* runCli(
        "apikey",
        "create",
        "--workspace",
        workspace.slug,
        "--name",
        "importer",
        "--role",
        "admin"
      )
      expect(outcome(created.exit)).toBe("success")
      expect(created.stdout).toHaveLength(2)
      const [announcement = "", key = ""] = created.stdout
      const id = /^API key ([0-9a-f-]{36}) \(importer\) created with role admin\. It is shown only this once:$/.exec(
        announcement
      )?.[1]
      expect(id).toBeDefined()
      expect(key).toMatch(new RegExp(`^ak_${workspace.slug}\\.${id}\\.[A-Za-z0-9_-]{43}$`))

      const principal = yield* authentication.fromApiKey(Redacted.make(key))
      expect({
        kind: principal.kind,
        id: principal.id,
        name: principal.name,
        workspace: principal.workspace.slug
      }).toEqual({
        kind: "service-account",
        id,
        name: "importer",
        workspace: workspace.slug
      })

      const revoked = yield* runCli("apikey", "revoke", "--workspace", workspace.slug, "--id", id ?? "")
      expect(outcome(revoked.exit)).toBe("success")
      expect(revoked.stdout).toEqual([`API key ${id} revoked`])
      const refused = yield* Effect.flip(authentication.fromApiKey(Redacted.make(key)))
      expect(refused).toEqual(
        expect.objectContaining({ _tag: "Unauthorized", message: "the API key is invalid or has been revoked" })
      )

      const again = yield* runCli("apikey", "revoke", "--workspace", workspace.slug, "--id", id ?? "")
      expect(outcome(again.exit)).toBe("NotFound")
      const malformed = yield* runCli("apikey", "revoke", "--workspace", workspace.slug, "--id", "not-an-id")
      expect(outcome(malformed.exit)).toBe("BadRequest")
    })
  )

  it.effect("an unknown role fails with NotFound and leaves nothing behind", () =>
    Effect.gen(function* () {
      const workspace = yield* cliWorkspace
      const user = yield* cliUser(password)

      const member = yield* runCli(
        "member",
        "add",
        "--workspace",
        workspace.slug,
        "--email",
        user.email,
        "--role",
        "no-such-role"
      )
      expect(outcome(member.exit)).toBe("NotFound")
      expect(failureMessage(member.exit)).toBe("unknown role: no-such-role")
      expect(member.stdout).toEqual([])
      // The membership and the role assignment are one transaction.
      expect(yield* (yield* Memberships).isMember(workspace.id, user.id)).toBe(false)

      const key = yield* runCli(
        "apikey",
        "create",
        "--workspace",
        workspace.slug,
        "--name",
        "bot",
        "--role",
        "no-such-role"
      )
      expect(outcome(key.exit)).toBe("NotFound")
      expect(key.stdout).toEqual([])
      expect(yield* countRows(workspace, "api_keys")).toBe(0)
      expect(yield* countRows(workspace, "role_assignments")).toBe(0)
    })
  )

  it.effect(
    "member set-role, member remove, user sign-out: exactly one role; roles, membership and sessions go; the last admin stays (Conflict)",
    () =>
      Effect.gen(function* () {
        const authentication = yield* Authentication
        const roles = yield* Roles
        const workspace = yield* cliWorkspace
        const admin = yield* cliUser(password)
        const user = yield* cliUser(password)
        yield* runCli(
          "role",
          "grant",
          "--workspace",
          workspace.slug,
          "--role",
          "viewer",
          ...["--business-object", "crm/deal", "--permission", "read"]
        )
        for (const member of [admin, user]) {
          const added = yield* runCli(
            "member",
            "add",
            "--workspace",
            workspace.slug,
            "--email",
            member.email,
            "--role",
            "admin"
          )
          expect(outcome(added.exit)).toBe("success")
        }
        const credentials = { workspace: workspace.slug, email: user.email, password: Redacted.make(password) }

        const set = yield* runCli(
          "member",
          "set-role",
          "--workspace",
          workspace.slug,
          "--email",
          user.email,
          "--role",
          "viewer"
        )
        expect(outcome(set.exit)).toBe("success")
        expect(set.stdout).toEqual([`${user.email} holds role viewer in ${workspace.slug} (and no other)`])
        expect(yield* roles.grantsOf(workspace, { kind: "user", id: user.id })).toEqual([
          { businessObject: "crm/deal", permission: "read" }
        ])
        const unknownRole = yield* runCli(
          "member",
          "set-role",
          "--workspace",
          workspace.slug,
          "--email",
          user.email,
          "--role",
          "nope"
        )
        expect(outcome(unknownRole.exit)).toBe("UnprocessableEntity")

        // The admin is now the last one: neither demoted nor removed.
        const demote = yield* runCli(
          "member",
          "set-role",
          "--workspace",
          workspace.slug,
          "--email",
          admin.email,
          "--role",
          "viewer"
        )
        expect(outcome(demote.exit)).toBe("Conflict")
        expect(failureMessage(demote.exit)).toMatch(/last admin/)
        const removeAdmin = yield* runCli("member", "remove", "--workspace", workspace.slug, "--email", admin.email)
        expect(outcome(removeAdmin.exit)).toBe("Conflict")
        expect(yield* (yield* Memberships).isMember(workspace.id, admin.id)).toBe(true)

        // user sign-out: every session of the user ends.
        const first = yield* authentication.signIn(credentials)
        const second = yield* authentication.signIn(credentials)
        const signedOut = yield* runCli("user", "sign-out", "--email", user.email)
        expect(outcome(signedOut.exit)).toBe("success")
        expect(signedOut.stdout).toEqual([
          `${user.email} is signed out everywhere (2 sessions ended; open streams closed)`
        ])
        for (const { token } of [first, second]) {
          expect((yield* Effect.flip(authentication.fromSession(Redacted.make(token))))._tag).toBe("Unauthorized")
        }

        const session = yield* authentication.signIn(credentials)
        const removed = yield* runCli("member", "remove", "--workspace", workspace.slug, "--email", user.email)
        expect(outcome(removed.exit)).toBe("success")
        expect(removed.stdout).toEqual([
          `${user.email} is no longer a member of ${workspace.slug} (roles and sessions there ended)`
        ])
        expect(yield* (yield* Memberships).isMember(workspace.id, user.id)).toBe(false)
        expect(yield* roles.grantsOf(workspace, { kind: "user", id: user.id })).toEqual([])
        expect((yield* Effect.flip(authentication.fromSession(Redacted.make(session.token))))._tag).toBe("Unauthorized")
        const again = yield* runCli("member", "remove", "--workspace", workspace.slug, "--email", user.email)
        expect(outcome(again.exit)).toBe("NotFound")
        const nobody = yield* runCli("user", "sign-out", "--email", `nobody-${uniqueSuffix()}@example.com`)
        expect(outcome(nobody.exit)).toBe("NotFound")
      })
  )

  it.effect("a bad permission or business object fails and grants nothing", () =>
    Effect.gen(function* () {
      const workspace = yield* cliWorkspace
      const grant = (businessObject: string, permission: string) =>
        runCli(
          "role",
          "grant",
          "--workspace",
          workspace.slug,
          "--role",
          "editor",
          "--business-object",
          businessObject,
          "--permission",
          permission
        )

      const badPermission = yield* grant("crm/deal", "write")
      expect(outcome(badPermission.exit)).toBe("ValidationError")
      expect(badPermission.stdout).toEqual([])
      expect(badPermission.stderr.join("\n")).toContain("Expected one of the following cases: read, update")

      for (const businessObject of ["deal", "crm/", "CRM/deal", "crm/deal; --", "**"]) {
        const badObject = yield* grant(businessObject, "read")
        expect(outcome(badObject.exit), businessObject).toBe("BadRequest")
      }
      const badRole = yield* runCli(
        "role",
        "grant",
        "--workspace",
        workspace.slug,
        "--role",
        "Bad Role",
        "--business-object",
        "crm/deal",
        "--permission",
        "read"
      )
      expect(outcome(badRole.exit)).toBe("BadRequest")

      expect(yield* countRows(workspace, "roles")).toBe(1) // admin only
      expect(yield* countRows(workspace, "role_grants")).toBe(2) // admin's
    })
  )

  it.effect("an unknown workspace fails with NotFound in every command that names one", () =>
    Effect.gen(function* () {
      const user = yield* cliUser(password)
      const missing = `no-such-${uniqueSuffix()}`
      const runs = [
        yield* runCli("member", "add", "--workspace", missing, "--email", user.email, "--role", "admin"),
        yield* runCli(
          "role",
          "grant",
          "--workspace",
          missing,
          "--role",
          "r",
          "--business-object",
          "crm/deal",
          "--permission",
          "read"
        ),
        yield* runCli("apikey", "create", "--workspace", missing, "--name", "bot", "--role", "admin"),
        yield* runCli("apikey", "revoke", "--workspace", missing, "--id", "00000000-0000-0000-0000-000000000000"),
        yield* runCli("member", "remove", "--workspace", missing, "--email", user.email),
        yield* runCli("member", "set-role", "--workspace", missing, "--email", user.email, "--role", "admin")
      ]
      for (const run of runs) {
        expect(outcome(run.exit)).toBe("NotFound")
        expect(failureMessage(run.exit)).toBe(`unknown workspace: ${missing}`)
        expect(run.stdout).toEqual([])
      }
    })
  )

  it.effect("a duplicate workspace fails with Conflict and leaves one row", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const workspace = yield* cliWorkspace
      const again = yield* runCli("workspace", "create", "--name", "Other", workspace.slug)
      expect(outcome(again.exit)).toBe("Conflict")
      expect(failureMessage(again.exit)).toBe(`workspace ${workspace.slug} already exists`)
      const rows =
        yield* sql`SELECT id, name FROM ${sql(`${platformSchema}.workspaces`)} WHERE slug = ${workspace.slug}`
      expect(rows).toEqual([{ id: workspace.id, name: workspace.name }])
    })
  )

  it.effect(
    "bad user input: an invalid email, a short password, a duplicate email, a missing option, no password, --password",
    () =>
      Effect.gen(function* () {
        const user = yield* cliUser(password)
        const email = yield* emailCleanedUp
        expect(outcome((yield* runUserCreate(password, "--email", "not-an-email", "--name", "X")).exit)).toBe(
          "BadRequest"
        )
        expect(outcome((yield* runUserCreate("short", "--email", email, "--name", "X")).exit)).toBe("BadRequest")
        expect(outcome((yield* runUserCreate(password, "--email", user.email.toUpperCase(), "--name", "X")).exit)).toBe(
          "Conflict"
        )
        expect(outcome((yield* runUserCreate(password, "--email", email)).exit)).toBe("ValidationError")
        const none = yield* runCliWithSecret(Option.none(), "user", "create", "--email", email, "--name", "X")
        expect(outcome(none.exit)).toBe("BadRequest")
        expect(failureMessage(none.exit)).toBe("no password given: type it when asked, or pipe it on standard input")

        // The flag the password once came in: refused before anything runs, saying how to give it, never echoing it.
        const flagged = yield* runCli("user", "create", "--email", email, "--name", "X", "--password", password)
        expect(outcome(flagged.exit)).toBe("ValidationError")
        expect(flagged.stderr.join("\n")).toMatch(/^--password is no longer accepted .*type the password when asked/)
        expect([...flagged.stdout, ...flagged.stderr].join("\n")).not.toContain(password)
        expect(yield* (yield* Users).findByEmail(email)).toEqual(Option.none())
      })
  )

  it.effect(
    "as a process: a bad slug exits non-zero with exactly one `error:` line on stderr",
    () =>
      Effect.gen(function* () {
        const result = yield* runProcess("npx", ["tsx", "src/cli/main.ts", "workspace", "create", "bad slug!"], {
          DATABASE_URL: testDatabaseUrl
        }).pipe(Effect.timeout("60 seconds"))
        expect(result.code).not.toBe(0)
        expect(result.code).not.toBeNull()
        const lines = meaningfulLines(result.stderr)
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatch(/^error: invalid workspace slug: /)
        expect(meaningfulLines(result.stdout)).toEqual([])
      }),
    90_000
  )

  it.effect("agent create prints the agent and a key that signs in as that agent, holding the role", () =>
    Effect.gen(function* () {
      const authentication = yield* Authentication
      const workspace = yield* cliWorkspace
      const created = yield* runCli(
        "agent",
        "create",
        "--workspace",
        workspace.slug,
        "--name",
        "Night shift",
        "--role",
        "admin"
      )
      expect(outcome(created.exit)).toBe("success")
      const [announcement = "", key = ""] = created.stdout
      const id =
        /^agent ([0-9a-f-]{36}) \(Night shift\) created with role admin\. Its key is shown only this once:$/.exec(
          announcement
        )?.[1]
      const principal = yield* authentication.fromApiKey(Redacted.make(key))
      expect({ kind: principal.kind, id: principal.id, name: principal.name }).toEqual({
        kind: "agent",
        id,
        name: "Night shift"
      })
      expect(yield* (yield* Roles).grantsOf(workspace, principal)).toEqual([
        { businessObject: "*", permission: "read" },
        { businessObject: "*", permission: "update" }
      ])
    })
  )

  it.effect("workspace seed writes only what is missing; jobs failed and jobs retry answer plainly", () =>
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      // Provisioning seeded it; a seed item added later (here: one whose mark is gone) is written on demand.
      const workspace = yield* cliWorkspace
      expect(yield* countRows(workspace, "records")).toBe(2)
      yield* sql`DELETE FROM ${sql(workspace.table("plugin_seeds"))} WHERE key = 'acme-pilot'`
      const first = yield* runCli("workspace", "seed", workspace.slug)
      expect(first.stdout).toEqual(["seed data: crm 1 new record"])
      const again = yield* runCli("workspace", "seed", workspace.slug)
      expect(again.stdout).toEqual(["seed data: crm 0 new records"])
      expect(yield* countRows(workspace, "records")).toBe(3)

      const failed = yield* runCli("jobs", "failed")
      expect(outcome(failed.exit)).toBe("success")
      expect(failed.stdout).toEqual(["no failed jobs or workflow runs"])
      const id = crypto.randomUUID()
      const retry = yield* runCli("jobs", "retry", id)
      expect(outcome(retry.exit)).toBe("NotFound")
    })
  )

  it.effect(
    "workspace drop: refused without a terminal or --yes (nothing dropped); with --yes its row, schema, sessions and queued work go",
    () =>
      Effect.gen(function* () {
        const sql = yield* SqlClient.SqlClient
        const authentication = yield* Authentication
        const workspace = yield* cliWorkspace
        const user = yield* cliUser(password)
        yield* runCli("member", "add", "--workspace", workspace.slug, "--email", user.email, "--role", "admin")
        const { token } = yield* authentication.signIn({
          workspace: workspace.slug,
          email: user.email,
          password: Redacted.make(password)
        })
        // A workflow run waiting in the queue: archiving a deal starts one.
        const actor = yield* freshUserActor(workspace)
        const records = yield* Records
        yield* (yield* UnitOfWork)
          .run(
            workspace,
            Effect.flatMap(records.create("crm/deal", { title: "Leaving" }), (deal) =>
              records.archive("crm/deal", deal.id)
            )
          )
          .pipe(withActor(actor))
        const runs = queuedIn(queueName((yield* AppConfig).queuePrefix, "workflows"), workspace)
        expect(yield* runs).toHaveLength(1)

        const unconfirmed = yield* runCli("workspace", "drop", workspace.slug)
        expect(outcome(unconfirmed.exit)).toBe("BadRequest")
        expect(failureMessage(unconfirmed.exit)).toBe(
          `refusing to go ahead unconfirmed: there is no terminal to type "${workspace.slug}" on; pass --yes to go ahead without asking`
        )
        expect(Option.isSome(yield* (yield* Workspaces).findBySlug(workspace.slug))).toBe(true)
        expect(yield* countRows(workspace, "records")).toBe(3)

        const dropped = yield* runCli("workspace", "drop", workspace.slug, "--yes")
        expect(outcome(dropped.exit)).toBe("success")
        expect(dropped.stdout).toEqual([
          `workspace ${workspace.slug} dropped (schema ${workspace.schema}; its queued work discarded, its sessions and streams ended)`
        ])
        expect(Option.isNone(yield* (yield* Workspaces).findBySlug(workspace.slug))).toBe(true)
        const schemas = yield* sql`SELECT 1 FROM information_schema.schemata WHERE schema_name = ${workspace.schema}`
        expect(schemas).toEqual([])
        expect(yield* runs).toEqual([])
        expect((yield* Effect.flip(authentication.fromSession(Redacted.make(token))))._tag).toBe("Unauthorized")
        // The user stays, a member of nothing.
        expect((yield* (yield* Users).getByEmail(user.email)).id).toBe(user.id)

        const again = yield* runCli("workspace", "drop", workspace.slug, "--yes")
        expect(outcome(again.exit)).toBe("NotFound")
        expect(failureMessage(again.exit)).toBe(`unknown workspace: ${workspace.slug}`)
      })
  )

  it.effect(
    "workspace drop --export: the whole feed first, as feed export writes it; a failed export drops nothing",
    () =>
      Effect.gen(function* () {
        const workspace = yield* cliWorkspace
        const dir = yield* Effect.acquireRelease(
          Effect.sync(() => mkdtempSync(join(tmpdir(), "drop-export-"))),
          (made) => Effect.sync(() => rmSync(made, { recursive: true, force: true }))
        )
        const expected = (yield* (yield* Feed).batch(workspace, feedStart, { readable: "all" }, 500, "ledger")).rows
          .map(feedLine)
          .join("")
        expect(expected).not.toBe("")

        const failed = yield* runCli(
          "workspace",
          "drop",
          "--export",
          join(dir, "missing", "feed.ndjson"),
          workspace.slug,
          "--yes"
        )
        expect(outcome(failed.exit)).toBe("PlatformError")
        expect(Option.isSome(yield* (yield* Workspaces).findBySlug(workspace.slug))).toBe(true)
        expect(yield* countRows(workspace, "records")).toBe(2)

        const file = join(dir, "feed.ndjson")
        const dropped = yield* runCli("workspace", "drop", "--export", file, workspace.slug, "--yes")
        expect(outcome(dropped.exit)).toBe("success")
        expect(readFileSync(file, "utf8")).toBe(expected)
        expect(dropped.stderr).toEqual([
          expect.stringMatching(new RegExp(`^exported 2 rows to ${file} in \\d+\\.\\d s$`))
        ])
        expect(Option.isNone(yield* (yield* Workspaces).findBySlug(workspace.slug))).toBe(true)
      })
  )

  it.effect(
    "workspace drop in the embedded server: unconfirmed, it drops nothing and asks for the slug; confirmed with it, it drops",
    () =>
      Effect.gen(function* () {
        const workspace = yield* cliWorkspace
        const inServer = (confirmed?: string) =>
          runCaptured(["workspace", "drop", workspace.slug], process.cwd(), { confirmed }).pipe(
            Effect.provide(NodeServices.layer)
          )
        const asked = yield* inServer()
        expect(asked).toEqual({
          _tag: "NeedsConfirmation",
          question: expect.stringContaining(`This drops workspace ${workspace.slug}`),
          expected: workspace.slug
        })
        expect(Option.isSome(yield* (yield* Workspaces).findBySlug(workspace.slug))).toBe(true)
        expect(yield* inServer("something else")).toMatchObject({ _tag: "NeedsConfirmation" })
        expect(Option.isSome(yield* (yield* Workspaces).findBySlug(workspace.slug))).toBe(true)

        expect(yield* inServer(workspace.slug)).toEqual({
          _tag: "Ran",
          exitCode: 0,
          output: [
            { stream: "stdout", text: expect.stringMatching(new RegExp(`^workspace ${workspace.slug} dropped`)) }
          ]
        })
        expect(Option.isNone(yield* (yield* Workspaces).findBySlug(workspace.slug))).toBe(true)
      })
  )
})
