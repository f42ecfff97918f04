import { Argument, CliOutput, Command, Flag } from "effect/cli"
import { Console, Effect, Redacted } from "effect"
import { Agents } from "../../agents/Agents"
import { ApiKeys } from "../../auth/ApiKeys"
import { NotFound } from "../../api/errors"
import { FailedWork } from "../../queue/FailedWork"
import { Members } from "../../auth/Members"
import { Roles } from "../../auth/Roles"
import { SignOuts } from "../../auth/SignOuts"
import { Users } from "../../auth/Users"
import { provisionWorkspace } from "../Provisioning"
import { Seeders } from "../../seeding/Seeders"
import type { SeedResult } from "../../seeding/Seeders"
import { Workspaces } from "../../tenancy/Workspaces"
import packageJson from "../../../package.json" with { type: "json" }
import { auditGroup } from "./audit"
import { feedExport } from "./feedExport"
import { command, presenterFor } from "./presenter"
import { table } from "./table"

/** A listing, or one line saying there is nothing to list. */
const printTable = (nothing: string, header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>) =>
  Console.log(rows.length === 0 ? nothing : table(header, rows))

const listOf = (items: ReadonlyArray<string>) => (items.length === 0 ? "-" : items.join(","))

const workspaceOption = Flag.String("workspace").pipe(Flag.withDescription("workspace slug"))
const roleOption = Flag.String("role").pipe(Flag.withDescription("role name"))

const workspaceCreate = command(
  "create",
  {
    slug: Argument.String("slug").pipe(Argument.withDescription("lower-case letters, digits and hyphens")),
    name: Flag.String("name").pipe(Flag.optional, Flag.withDescription("display name (default: the slug)"))
  },
  ({ name, slug }) =>
    Effect.gen(function* () {
      const { seeded, workspace } = yield* provisionWorkspace(slug, name._tag === "Some" ? name.value : undefined)
      yield* Console.log(
        `workspace ${workspace.slug} created (schema ${workspace.schema}, role admin holds every grant)`
      )
      yield* Console.log(describeSeeding(seeded))
    })
).pipe(
  Command.withDescription(
    "Create a workspace: its schema, migrated, the built-in admin role and the plugins' seed data"
  )
)

const describeSeeding = (seeded: ReadonlyArray<SeedResult>) =>
  seeded.length === 0
    ? "no plugin has seed data"
    : `seed data: ${seeded.map((result) => `${result.plugin} ${result.written} new record${result.written === 1 ? "" : "s"}`).join(", ")}`

const workspaceSeed = command("seed", { slug: Argument.String("slug") }, ({ slug }) =>
  Effect.gen(function* () {
    const workspace = yield* (yield* Workspaces).get(slug)
    yield* Console.log(describeSeeding(yield* (yield* Seeders).seedWorkspace(workspace)))
  })
).pipe(Command.withDescription("Write the plugins' seed data that a workspace does not have yet (safe to repeat)"))

const workspaceList = command("list", {}, () =>
  Effect.gen(function* () {
    const all = yield* (yield* Workspaces).list
    yield* printTable(
      "no workspaces (create one: workspace create <slug>)",
      ["SLUG", "NAME", "SCHEMA", "ID"],
      all.map((workspace) => [workspace.slug, workspace.name, workspace.schema, workspace.id])
    )
  })
).pipe(Command.withDescription("List the workspaces"))

const userList = command("list", {}, () =>
  Effect.gen(function* () {
    const users = yield* (yield* Users).list
    yield* printTable(
      "no users (create one: user create --email ... --name ... --password ...)",
      ["EMAIL", "NAME", "WORKSPACES", "ID"],
      users.map((user) => [user.email, user.name, listOf(user.workspaces), user.id])
    )
  })
).pipe(Command.withDescription("List the users and the workspaces each belongs to"))

const userCreate = command(
  "create",
  {
    email: Flag.String("email"),
    name: Flag.String("name"),
    password: Flag.Redacted("password")
  },
  ({ email, name, password }) =>
    Effect.gen(function* () {
      const user = yield* (yield* Users).create({ email, name, password: Redacted.value(password) })
      yield* Console.log(`user ${user.email} created (id ${user.id})`)
    })
).pipe(Command.withDescription("Create a user who can sign in"))

const userSignOut = command("sign-out", { email: Flag.String("email") }, ({ email }) =>
  Effect.gen(function* () {
    const user = yield* (yield* Users).getByEmail(email)
    const ended = yield* (yield* SignOuts).everywhere(user.id)
    yield* Console.log(
      `${user.email} is signed out everywhere (${ended} session${ended === 1 ? "" : "s"} ended; open streams closed)`
    )
  })
).pipe(Command.withDescription("Sign a user out of every session, in every workspace; their open streams end"))

const memberList = command("list", { workspace: workspaceOption }, ({ workspace }) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const { members } = yield* (yield* Members).list(target)
    yield* printTable(
      `no members in ${target.slug}`,
      ["EMAIL", "NAME", "ROLES", "USER ID"],
      members.map((member) => [member.email, member.name, listOf(member.roles), member.userId])
    )
  })
).pipe(Command.withDescription("List a workspace's members and the roles each holds"))

const memberAdd = command(
  "add",
  { workspace: workspaceOption, email: Flag.String("email"), role: roleOption },
  ({ email, role, workspace }) =>
    Effect.gen(function* () {
      const target = yield* (yield* Workspaces).get(workspace)
      const user = yield* (yield* Users).getByEmail(email)
      yield* (yield* Members).add(target, user.id, role)
      yield* Console.log(`${user.email} is a member of ${target.slug} with role ${role}`)
    })
).pipe(Command.withDescription("Make a user a member of a workspace, holding a role"))

const memberRemove = command(
  "remove",
  { workspace: workspaceOption, email: Flag.String("email") },
  ({ email, workspace }) =>
    Effect.gen(function* () {
      const target = yield* (yield* Workspaces).get(workspace)
      const user = yield* (yield* Users).getByEmail(email)
      yield* (yield* Members).remove(target, user.id)
      yield* Console.log(`${user.email} is no longer a member of ${target.slug} (roles and sessions there ended)`)
    })
).pipe(
  Command.withDescription(
    "Remove a member from a workspace: their roles and sessions there end, and their open streams close (not the last admin)"
  )
)

const memberSetRole = command(
  "set-role",
  { workspace: workspaceOption, email: Flag.String("email"), role: roleOption },
  ({ email, role, workspace }) =>
    Effect.gen(function* () {
      const target = yield* (yield* Workspaces).get(workspace)
      const user = yield* (yield* Users).getByEmail(email)
      yield* (yield* Members).setRole(target, user.id, role)
      yield* Console.log(`${user.email} holds role ${role} in ${target.slug} (and no other)`)
    })
).pipe(
  Command.withDescription(
    "Make a member hold exactly one role (their open streams close and reopen with it; the last admin stays admin)"
  )
)

const roleGrant = command(
  "grant",
  {
    workspace: workspaceOption,
    role: roleOption,
    businessObject: Flag.String("business-object").pipe(Flag.withDescription("<namespace>/<name>, or * for all")),
    permission: Flag.Literals("permission", ["read", "update"])
  },
  ({ businessObject, permission, role, workspace }) =>
    Effect.gen(function* () {
      const target = yield* (yield* Workspaces).get(workspace)
      yield* (yield* Roles).grant(target, role, businessObject, permission)
      yield* (yield* Members).roleChanged(target, role)
      yield* Console.log(`role ${role} in ${target.slug} may ${permission} ${businessObject}`)
    })
).pipe(Command.withDescription("Grant a role a permission on a business object (creates the role if new)"))

const apiKeyCreate = command(
  "create",
  { workspace: workspaceOption, name: Flag.String("name"), role: roleOption },
  ({ name, role, workspace }) =>
    Effect.gen(function* () {
      const target = yield* (yield* Workspaces).get(workspace)
      const { apiKey, key } = yield* (yield* ApiKeys).create(target, name, role)
      yield* Console.log(`API key ${apiKey.id} (${apiKey.name}) created with role ${role}. It is shown only this once:`)
      yield* Console.log(key)
    })
).pipe(Command.withDescription("Create an API key (a service account) holding a role; prints the key once"))

const apiKeyList = command("list", { workspace: workspaceOption }, ({ workspace }) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const keys = yield* (yield* ApiKeys).list(target)
    yield* printTable(
      `no API keys in ${target.slug}`,
      ["ID", "NAME", "HOLDER", "ROLES", "CREATED", "STATE"],
      keys.map((key) => [
        key.id,
        key.name,
        key.agent === null ? "service account" : `agent ${key.agent}`,
        key.agent === null ? listOf(key.roles) : "(the agent's)",
        key.createdAt.toISOString(),
        key.revokedAt === null ? "active" : `revoked ${key.revokedAt.toISOString()}`
      ])
    )
  })
).pipe(Command.withDescription("List a workspace's API keys, revoked ones too (never their secrets)"))

const apiKeyRevoke = command(
  "revoke",
  { workspace: workspaceOption, id: Flag.String("id").pipe(Flag.withDescription("the key's id")) },
  ({ id, workspace }) =>
    Effect.gen(function* () {
      const target = yield* (yield* Workspaces).get(workspace)
      yield* (yield* ApiKeys).revoke(target, id)
      yield* Console.log(`API key ${id} revoked`)
    })
).pipe(Command.withDescription("Revoke an API key"))

const agentCreate = command(
  "create",
  { workspace: workspaceOption, name: Flag.String("name"), role: roleOption },
  ({ name, role, workspace }) =>
    Effect.gen(function* () {
      const target = yield* (yield* Workspaces).get(workspace)
      const { agent, key } = yield* (yield* Agents).create(target, name, role)
      yield* Console.log(
        `agent ${agent.id} (${agent.name}) created with role ${role}. Its key is shown only this once:`
      )
      yield* Console.log(key)
    })
).pipe(Command.withDescription("Create an agent (a principal with its own roles) and the key it signs in with"))

const agentList = command("list", { workspace: workspaceOption }, ({ workspace }) =>
  Effect.gen(function* () {
    const target = yield* (yield* Workspaces).get(workspace)
    const agents = yield* (yield* Agents).list(target)
    yield* printTable(
      `no agents in ${target.slug}`,
      ["NAME", "ROLES", "ACTIVE KEYS", "ID"],
      agents.map((agent) => [agent.name, listOf(agent.roles), String(agent.activeKeys), agent.id])
    )
  })
).pipe(Command.withDescription("List a workspace's agents, their roles and live keys"))

const failedList = command("failed", {}, () =>
  Effect.gen(function* () {
    const failed = yield* (yield* FailedWork).list
    if (failed.length === 0) return yield* Console.log("no failed jobs or workflow runs")
    for (const item of failed) {
      yield* Console.log(
        `${item.id} ${item.kind} ${item.name} in ${item.workspace}: ${item.attempts} attempts, last at ${item.failedAt.toISOString()}: ${item.lastFailure.split("\n")[0]}`
      )
    }
  })
).pipe(Command.withDescription("List jobs and workflow runs that used up their attempts"))

const failedRetry = command("retry", { id: Argument.String("id") }, ({ id }) =>
  Effect.gen(function* () {
    if (!(yield* (yield* FailedWork).retry(id)))
      return yield* new NotFound({ message: `no failed job or workflow run ${id}` })
    yield* Console.log(`${id} will be tried again`)
  })
).pipe(Command.withDescription("Give a failed job or workflow run a fresh set of attempts"))

const group = (name: string, description: string) => Command.make(name).pipe(Command.withDescription(description))

export const adminCommand = Command.make("admin").pipe(
  Command.withDescription(
    "Set up workspaces, users, roles, API keys and agents; look after failed jobs; export the change feed"
  ),
  Command.withSubcommands([
    group("workspace", "Workspaces").pipe(Command.withSubcommands([workspaceList, workspaceCreate, workspaceSeed])),
    group("user", "Users").pipe(Command.withSubcommands([userList, userCreate, userSignOut])),
    group("member", "Workspace members").pipe(
      Command.withSubcommands([memberList, memberAdd, memberRemove, memberSetRole])
    ),
    group("role", "Roles and their grants").pipe(Command.withSubcommands([roleGrant])),
    group("apikey", "API keys").pipe(Command.withSubcommands([apiKeyList, apiKeyCreate, apiKeyRevoke])),
    group("agent", "Agents").pipe(Command.withSubcommands([agentList, agentCreate])),
    group("jobs", "Background jobs and workflow runs").pipe(Command.withSubcommands([failedList, failedRetry])),
    group("feed", "The workspace change feed").pipe(Command.withSubcommands([feedExport])),
    auditGroup
  ])
)

/** Help, version and bad invocations as the command line has always shown them. */
export const adminPresenter = presenterFor(adminCommand)

/** The command line's version (`admin --version`: the package's). */
export const cliOptions = { version: packageJson.version }

/** Runs the admin command line on `argv` (as `process.argv`: node, script, then the arguments). */
export const runAdmin = (argv: ReadonlyArray<string>) =>
  Command.runWith(
    adminCommand,
    cliOptions
  )(argv.slice(2)).pipe(Effect.provideService(CliOutput.Presenter, adminPresenter))
